"""The scrubber's contract (placeholders that keep distinct secrets distinct), hashing and metadata limits.
Each detector's own examples are in test_credential_detectors.py."""

from __future__ import annotations

import hashlib
import re

import pytest
from zengram.kernel.content import PLACEHOLDER, Scrubber, content_hash, derive_digest_key
from zengram.kernel.json_limits import json_depth

SCRUBBER = Scrubber(derive_digest_key("unit-test-key"))
PLACEHOLDER_SHAPE = re.compile(r"\[REDACTED:[a-z0-9-]+:[0-9a-f]{12}\]")


def test_a_secret_becomes_a_placeholder_naming_its_kind_and_the_text_around_it_survives() -> None:
    scrubbed = SCRUBBER.scrub("Rotate AKIAIOSFODNN7EXAMPLE before the Globex audit on Friday")

    assert re.fullmatch(r"Rotate \[REDACTED:aws-access-key-id:[0-9a-f]{12}\] before the Globex audit on Friday",
                        scrubbed)


def test_the_same_secret_always_gets_the_same_placeholder() -> None:
    first = SCRUBBER.scrub("The Acme SFTP password: Autumn2025!")
    again = Scrubber(derive_digest_key("unit-test-key")).scrub("The Acme SFTP password: Autumn2025!")

    assert first == again
    assert content_hash(first) == content_hash(again)


def test_texts_differing_only_in_the_secret_stay_different() -> None:
    autumn = SCRUBBER.scrub("The Acme SFTP password: Autumn2025!")
    spring = SCRUBBER.scrub("The Acme SFTP password: Spring2026!")

    assert autumn != spring
    assert content_hash(autumn) != content_hash(spring)
    assert "Autumn2025" not in autumn and "Spring2026" not in spring


def test_the_digest_is_keyed_so_it_cannot_be_checked_against_guesses() -> None:
    text = "the db password is hunter2"
    ours = SCRUBBER.scrub(text)
    theirs = Scrubber(derive_digest_key("another-deployment")).scrub(text)
    digest = ours.rsplit(":", 1)[1].rstrip("]")

    assert ours != theirs
    for unkeyed in (hashlib.sha256(b"hunter2"), hashlib.sha1(b"hunter2"), hashlib.md5(b"hunter2")):
        assert not unkeyed.hexdigest().startswith(digest)


def test_scrubbing_is_idempotent_and_keeps_earlier_placeholders() -> None:
    texts = [
        "password: correct horse battery staple",
        "redis://:Sup3rRedisPw@cache.acme.internal:6379/0 and postgres://app:p@ss/w0rd@db:5432/x",
        "The staging password: [REDACTED] is shared in 1Password",
        "password: foo [REDACTED] bar",
        '{"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "token": "abc123def456ghi789"}',
    ]
    for text in texts:
        once = SCRUBBER.scrub(text)
        assert SCRUBBER.scrub(once) == once, text
    assert SCRUBBER.scrub("The staging password: [REDACTED] is shared in 1Password") == (
        "The staging password: [REDACTED] is shared in 1Password")


def test_overlapping_findings_become_one_placeholder() -> None:
    scrubbed = SCRUBBER.scrub("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhY21lLWJvdCJ9.c2lnbmF0dXJl")

    assert scrubbed.startswith("Authorization: Bearer [REDACTED:")
    assert len(PLACEHOLDER.findall(scrubbed)) == 1


def test_the_key_is_fetched_on_the_first_scrub_only() -> None:
    calls: list[int] = []

    def key() -> bytes:
        calls.append(1)
        return derive_digest_key("lazy")

    scrubber = Scrubber(key)
    assert calls == []
    scrubber.scrub("nothing secret here")
    assert calls == []  # nothing to redact, nothing to key
    scrubber.scrub("password: hunter2hunter2")
    scrubber.scrub("password: other-secret-9")
    assert calls == [1]


def test_metadata_strings_are_scrubbed_at_every_depth_keys_included() -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    scrubbed = SCRUBBER.scrub_value({"a": ["password=hunter22x", 3], "b": {"c": f"uses {token}"},
                                     token: "ci-bot", "n": None, "ok": True})

    assert scrubbed["a"][0].startswith("password=[REDACTED:password:") and scrubbed["a"][1] == 3
    assert scrubbed["b"]["c"].startswith("uses [REDACTED:github-token:")
    assert token not in repr(scrubbed) and "ci-bot" in scrubbed.values()
    assert scrubbed["n"] is None and scrubbed["ok"] is True


def test_a_metadata_entry_labelled_as_a_secret_loses_its_whole_value() -> None:
    scrubbed = SCRUBBER.scrub_value({
        "password": "correct horse battery staple",
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "api_key": "7c4f2a9e1b3d8f6a",
        "secret": "classified",  # a weak label: only a generated-looking value is a secret
        "password_policy": "12 characters",
        "token": "${GITHUB_TOKEN}",
        "db_password": "before [REDACTED] after",
    })

    assert PLACEHOLDER_SHAPE.fullmatch(scrubbed["password"])
    assert PLACEHOLDER_SHAPE.fullmatch(scrubbed["AWS_SECRET_ACCESS_KEY"])
    assert PLACEHOLDER_SHAPE.fullmatch(scrubbed["api_key"])
    assert scrubbed["secret"] == "classified"
    assert scrubbed["password_policy"] == "12 characters"
    assert scrubbed["token"] == "${GITHUB_TOKEN}"
    assert PLACEHOLDER_SHAPE.fullmatch(scrubbed["db_password"])
    assert SCRUBBER.scrub_value(scrubbed) == scrubbed


@pytest.mark.parametrize("text", ["", "plain words", "Acme Corp uses Next.js 14 with App Router"])
def test_text_without_credentials_is_returned_as_is(text: str) -> None:
    assert SCRUBBER.scrub(text) == text


def test_hash_is_the_first_16_hex_of_sha256() -> None:
    assert content_hash("hello") == hashlib.sha256(b"hello").hexdigest()[:16]


def test_json_depth_counts_objects_and_arrays() -> None:
    assert json_depth("x") == 0
    assert json_depth({"a": 1}) == 1
    assert json_depth({"a": {"b": [1]}}) == 3
