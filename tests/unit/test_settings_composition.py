"""The host's Settings inherits every context's settings model: a validator one context names like another's would
silently replace it (Python's method resolution), so a context's values would be read unvalidated."""

from __future__ import annotations

from collections import Counter

import pytest
from pydantic_settings import BaseSettings
from zengram.settings import Settings


def own_validators(model: type[BaseSettings]) -> set[str]:
    decorators = model.__pydantic_decorators__
    found = {**decorators.field_validators, **decorators.model_validators}
    return {name for name in found if name in vars(model)}  # defined by this model, not inherited


def test_no_two_settings_models_name_a_validator_alike() -> None:
    models = [model for model in Settings.__mro__[1:] if isinstance(model, type) and issubclass(model, BaseSettings)
              and model is not BaseSettings]
    names = Counter(name for model in models for name in own_validators(model))
    assert [name for name, count in names.items() if count > 1] == []


@pytest.mark.parametrize(("variable", "field"), [("ZENGRAM_DOCUMENTS_ALLOWED_ROOTS", "documents_allowed_roots"),
                                                 ("ZENGRAM_OUTBOUND_ALLOW", "outbound_allow")])
def test_each_contexts_comma_separated_list_is_read_by_the_host(monkeypatch: pytest.MonkeyPatch, variable: str,
                                                                 field: str) -> None:
    monkeypatch.setenv(variable, "s3://a, s3://b")
    assert getattr(Settings(), field) == ["s3://a", "s3://b"]
