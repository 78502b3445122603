"""Credential scrubbing, hashing and metadata limits."""

from __future__ import annotations

import hashlib

import pytest
from zengram.domain.content import REDACTED, content_hash, json_depth, scrub_credentials, scrub_value

SECRETS = [
    ("OpenAI key sk-proj-abcdefghijklmnopqrstuvwx1234", "sk-proj-abcdefghijklmnopqrstuvwx1234"),
    ("aws AKIAIOSFODNN7EXAMPLE in env", "AKIAIOSFODNN7EXAMPLE"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc.def", "eyJhbGciOiJIUzI1NiJ9.abc.def"),
    ("the db password: hunter22!", "hunter22!"),
    ("set API_KEY=abcd1234efgh", "abcd1234efgh"),
    ('config {"client_secret": "s3cr3t-value"}', "s3cr3t-value"),
    ("postgres://admin:pa55word@db.internal:5432/app", "pa55word"),
    ("slack xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "MIIEow"),
]


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_credentials_are_redacted(text: str, secret: str) -> None:
    scrubbed = scrub_credentials(text)
    assert secret not in scrubbed
    assert REDACTED in scrubbed


@pytest.mark.parametrize("text", [
    "Acme Corp uses Next.js 14 with App Router",
    "The password policy requires 12 characters",
    "We discussed the API key rotation schedule",
    "Deploy skipped: tests were flaky",
])
def test_ordinary_prose_is_left_alone(text: str) -> None:
    assert scrub_credentials(text) == text


def test_metadata_strings_are_scrubbed_at_every_depth() -> None:
    scrubbed = scrub_value({"a": ["password=hunter22x", 3], "b": {"c": "sk-abcdefghijklmnopqrstuvwxyz"}})
    assert scrubbed == {"a": [f"password={REDACTED}", 3], "b": {"c": REDACTED}}


def test_hash_is_the_first_16_hex_of_sha256() -> None:
    assert content_hash("hello") == hashlib.sha256(b"hello").hexdigest()[:16]


def test_json_depth_counts_objects_and_arrays() -> None:
    assert json_depth("x") == 0
    assert json_depth({"a": 1}) == 1
    assert json_depth({"a": {"b": [1]}}) == 3
