"""Where the placeholder digests' key comes from on each host, and that it is read only when first needed."""

from __future__ import annotations

from pathlib import Path

import pytest
from zengram.assembly.containers import build_scrubber
from zengram.assembly.keys import resolve_api_key
from zengram.kernel.content import Scrubber, derive_digest_key
from zengram.kernel.errors import FeatureUnavailable
from zengram.settings import Settings

SECRET_TEXT = "the db password is hunter2hunter2"


def scrubbed_with(secret: str) -> str:
    return Scrubber(derive_digest_key(secret)).scrub(SECRET_TEXT)


def test_a_scrub_key_wins_over_the_api_key(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, api_key="admin-key", scrub_key="scrub-key")

    assert build_scrubber(settings).scrub(SECRET_TEXT) == scrubbed_with("scrub-key") != scrubbed_with("admin-key")


def test_without_a_scrub_key_the_api_key_keys_the_digests(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, api_key="admin-key")

    assert build_scrubber(settings).scrub(SECRET_TEXT) == scrubbed_with("admin-key")


def test_the_scrub_key_is_read_from_the_environment_and_blank_means_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZENGRAM_SCRUB_KEY", "from-env")
    assert Settings().scrub_key is not None and Settings().scrub_key.get_secret_value() == "from-env"
    monkeypatch.setenv("ZENGRAM_SCRUB_KEY", "  ")
    assert Settings().scrub_key is None


def test_the_lambda_host_reads_the_api_key_secret_on_the_first_scrub_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[str | None] = []

    def fetch_api_key(*, secret_id: str | None = None, parameter_name: str | None = None) -> str:
        calls.append(secret_id)
        return "from-secrets-manager"

    monkeypatch.setattr("zengram.adapters.aws_parameters.fetch_api_key", fetch_api_key)
    settings = Settings(data_dir=tmp_path, record_store="dynamodb", api_key_secret_id="zengram/web-key")

    scrubber = build_scrubber(settings)
    assert calls == []  # built without touching Secrets Manager (read-only functions never need it)
    assert scrubber.scrub("nothing to hide") == "nothing to hide" and calls == []
    assert scrubber.scrub(SECRET_TEXT) == scrubbed_with("from-secrets-manager")
    scrubber.scrub("password: another-one-42")
    assert calls == ["zengram/web-key"]


def test_the_embedded_host_without_an_api_key_uses_its_key_file(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")

    scrubbed = build_scrubber(settings).scrub(SECRET_TEXT)

    key, key_file = resolve_api_key(settings)
    assert key_file is not None and key_file.exists()
    assert scrubbed == scrubbed_with(key)


def test_a_dynamodb_host_without_any_key_refuses_to_write_secrets(tmp_path: Path) -> None:
    scrubber = build_scrubber(Settings(data_dir=tmp_path, record_store="dynamodb"))

    assert scrubber.scrub("nothing to hide") == "nothing to hide"
    with pytest.raises(FeatureUnavailable, match="ZENGRAM_SCRUB_KEY"):
        scrubber.scrub(SECRET_TEXT)
