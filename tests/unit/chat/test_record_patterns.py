"""Caller-supplied regexes of record schemas run on RE2 (linear time), or are refused naming the field."""

from __future__ import annotations

import pytest
from zengram.chat.domain import record_patterns
from zengram.chat.domain.records import FieldDef, RecordSchema, check_fields
from zengram.kernel.errors import InvalidInput

from tests.contract.chat.helpers import T0

EVIL = "^(a+)+$"  # exponential on a backtracking engine: 40 `a`s and a `!` would take hours with `re`


def schema(**fields: FieldDef) -> RecordSchema:
    return RecordSchema(project_id="acme", type_name="thing", fields=fields, created_at=T0, updated_at=T0)


@pytest.fixture
def engine_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The patterns matched through RE2 (every caller regex goes through `record_patterns.search`)."""
    calls: list[str] = []
    real = record_patterns.search

    def counting(pattern: str, text: str) -> bool:
        calls.append(pattern)
        return real(pattern, text)

    monkeypatch.setattr(record_patterns, "search", counting)
    return calls


@pytest.mark.timeout(60)  # a safety net only: with `re` this would not end in the suite's lifetime
def test_a_catastrophic_pattern_is_matched_by_re2_with_the_right_answer(engine_calls: list[str]) -> None:
    check_fields({"code": FieldDef(type="string", pattern=EVIL)})
    evil = schema(code=FieldDef(type="string", pattern=EVIL))
    with pytest.raises(InvalidInput, match=r"^data\.code: .* does not match"):
        evil.validate_data({"code": "a" * 40 + "!"})
    evil.validate_data({"code": "a" * 40})
    assert engine_calls == [EVIL, EVIL]
    assert type(record_patterns.compiled(EVIL)).__module__.startswith("re2")


@pytest.mark.timeout(60)
def test_pattern_properties_and_additional_properties_use_re2(engine_calls: list[str]) -> None:
    items = {"type": "object", "patternProperties": {EVIL: {"type": "integer"}}, "additionalProperties": False}
    field = FieldDef(type="array", items=items)
    check_fields({"counts": field})
    nested = schema(counts=field)
    nested.validate_data({"counts": [{"aaaa": 1}]})
    with pytest.raises(InvalidInput, match=r"^data\.counts\.0\.aaaa: 'x' is not of type 'integer'"):
        nested.validate_data({"counts": [{"aaaa": "x"}]})
    with pytest.raises(InvalidInput, match=r"^data\.counts\.0\.a+!: not a field of this schema"):
        nested.validate_data({"counts": [{"a" * 40 + "!": 1}]})
    assert set(engine_calls) == {EVIL}


@pytest.mark.parametrize("fields", [
    {"code": FieldDef(type="string", pattern=r"^(a)\1$")},  # a backreference: no linear-time engine runs it
    {"code": FieldDef(type="string", pattern=r"^(?=a)")},  # a lookahead
    {"code": FieldDef(type="array", items={"type": "object", "patternProperties": {r"(x)\1": {}}})},
    {"code": FieldDef(type="array", items={"type": "object", "patternProperties": {"^x": {}},
                                           "unevaluatedProperties": False})},
])
def test_a_pattern_re2_cannot_run_is_refused_naming_the_field(fields: dict[str, FieldDef]) -> None:
    with pytest.raises(InvalidInput, match=r"^fields\.code: "):
        check_fields(fields)


def test_normal_patterns_keep_working() -> None:
    fields = {"sku": FieldDef(type="string", pattern=r"^[A-Z]{3}-\d{4}$"),
              "tags": FieldDef(type="array", items={"type": "string", "pattern": "^#"}),
              "literal": FieldDef(type="string", enum=[{"pattern": r"(a)\1"}])}  # data, not a regex
    check_fields(fields)
    checked = schema(**fields)
    checked.validate_data({"sku": "ABC-1234", "tags": ["#x"]})
    with pytest.raises(InvalidInput, match=r"^data\.sku: 'abc-1234' does not match"):
        checked.validate_data({"sku": "abc-1234"})
    with pytest.raises(InvalidInput, match=r"^data\.tags\.0: 'x' does not match"):
        checked.validate_data({"tags": ["x"]})
