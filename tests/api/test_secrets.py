"""Credentials are replaced by [REDACTED] in content and metadata before hashing, storing and indexing."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.api.helpers import expected_hash, get, search, search_ids, store

OPENAI_KEY = "sk-proj-Zx81LmQ0vT4rN9aB2cD3eF4gH5iJ6kL7"
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhY21lLWJvdCJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n"
    "-----END RSA PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    ("content", "secret"),
    [
        (f"The OpenAI key for the Acme summariser is {OPENAI_KEY}", OPENAI_KEY),
        (f"Deploy user for Globex uses access key {AWS_KEY} in us-east-1", AWS_KEY),
        (f"CI pushes releases with {GITHUB_TOKEN} as the bot token", GITHUB_TOKEN),
        (f"Call the Initech API with header Authorization: Bearer {JWT}", JWT),
        ("Use Authorization: Bearer 9f8e7d6c5b4a39281706 for the legacy endpoint", "9f8e7d6c5b4a39281706"),
        ("The staging database password: Winter2026!Acme", "Winter2026!Acme"),
        ("Root login is admin and the password is correcthorsebattery", "correcthorsebattery"),
        ("Connect with postgres://billing:S3cr3tPa55@db.acme.internal:5432/invoices", "S3cr3tPa55"),
        (f"Deploy key for the bastion host:\n{PRIVATE_KEY}\nstored in the vault", "MIIEowIBAAKCAQEA"),
    ],
)
def test_secrets_are_redacted_from_content(client: TestClient, content: str, secret: str) -> None:
    created = store(client, content)

    record = get(client, created["id"])

    assert secret not in record["content"]
    assert "[REDACTED]" in record["content"]
    assert record["content_hash"] == created["content_hash"] == expected_hash(record["content"])
    assert created["content_hash"] != expected_hash(content)


def test_the_text_around_a_secret_survives(client: TestClient) -> None:
    created = store(client, f"Rotate {AWS_KEY} before the Globex audit on Friday")

    assert get(client, created["id"])["content"] == "Rotate [REDACTED] before the Globex audit on Friday"


def test_ordinary_text_is_left_alone(client: TestClient) -> None:
    text = "Reset your password via the portal; the API key page is under Settings > Developers"

    created = store(client, text)

    assert get(client, created["id"])["content"] == text
    assert created["content_hash"] == expected_hash(text)


def test_secrets_are_redacted_from_nested_metadata(client: TestClient) -> None:
    metadata = {
        "env": {"OPENAI_API_KEY": OPENAI_KEY, "region": "eu-west-1"},
        "notes": [f"aws {AWS_KEY}", "password=hunter2hunter2"],
        "attempts": 3,
    }

    created = store(client, "Environment variables for the Acme worker", metadata=metadata)

    stored = get(client, created["id"])["metadata"]
    flat = repr(stored)
    for secret in (OPENAI_KEY, AWS_KEY, "hunter2hunter2"):
        assert secret not in flat
    assert stored["env"]["region"] == "eu-west-1"
    assert stored["attempts"] == 3
    assert stored["notes"][0] == "aws [REDACTED]"


def test_secrets_in_metadata_keys_are_redacted(client: TestClient) -> None:
    created = store(client, "Tokens the Acme CI bot may use", metadata={"tokens": {GITHUB_TOKEN: "ci-bot"}})

    assert GITHUB_TOKEN not in repr(get(client, created["id"])["metadata"])


def test_status_value_is_scrubbed(client: TestClient) -> None:
    created = store(client, "Vault token status", type="status", subject="vault-token",
                    status_value=f"rotated to {GITHUB_TOKEN}")

    assert GITHUB_TOKEN not in get(client, created["id"])["status_value"]


def test_writes_differing_only_in_the_secret_are_duplicates(client: TestClient) -> None:
    first = store(client, "The Acme SFTP password: Autumn2025!")

    again = store(client, "The Acme SFTP password: Spring2026!", expect=200)

    assert again["deduplicated"] is True
    assert again["id"] == first["id"]


def test_a_secret_is_never_searchable_or_returned(client: TestClient) -> None:
    store(client, f"The OpenAI key for the Acme summariser is {OPENAI_KEY}")

    assert search_ids(client, "anything", entity=OPENAI_KEY) == []
    body = search(client, OPENAI_KEY, format="full")
    assert body["results"]
    assert all(OPENAI_KEY not in repr(hit) for hit in body["results"])
    assert all("keyword" not in hit["retrieval_sources"] for hit in body["results"])
