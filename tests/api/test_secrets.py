"""Credentials are replaced by `[REDACTED:<kind>:<digest>]` in every stored free-text field before hashing, storing
and indexing; the digest keeps distinct secrets distinct, so a redaction never merges two different memories."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import Container
from zengram.embedded.app import build_embedded_app
from zengram.settings import Settings

from tests.api.helpers import expected_hash, get, query, search, search_ids, store
from tests.data.credential_corpus import AWS_SECRET, POSITIVES
from tests.support import API_KEY, TEST_SCRUBBER

OPENAI_KEY = "sk-proj-Zx81LmQ0vT4rN9aB2cD3eF4gH5iJ6kL7"
AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhY21lLWJvdCJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n"
    "-----END RSA PRIVATE KEY-----"
)
PLACEHOLDER = r"\[REDACTED:[a-z0-9-]+:[0-9a-f]{12}\]"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
SINCE = "2026-03-01T00:00:00Z"


def without_generated_identifiers(value: Any) -> Any:
    """The JSON with random ids and content hashes blanked: a short hex secret such as "9f8e7d" turns up inside
    one of the hundreds read back by chance. Only whole values are blanked, so a secret inside text still shows."""
    if isinstance(value, dict):
        return {key: "<hash>" if key.endswith("_hash") else without_generated_identifiers(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [without_generated_identifiers(item) for item in value]
    return "<uuid>" if isinstance(value, str) and UUID.fullmatch(value) else value


def body_of(response: Any) -> str:
    assert response.status_code == 200, response.text
    return json.dumps(response.json())


@pytest.mark.parametrize(
    ("content", "secret"),
    [
        (f"The OpenAI key for the Acme summariser is {OPENAI_KEY}", OPENAI_KEY),
        (f"Deploy user for Globex uses access key {AWS_KEY} in us-east-1", AWS_KEY),
        (f"CI pushes releases with {GITHUB_TOKEN} as the bot token", GITHUB_TOKEN),
        (f"Call the Initech API with header Authorization: Bearer {JWT}", JWT),
        ("Use Authorization: Bearer 9f8e7d for the legacy endpoint", "9f8e7d"),
        ("The staging database password: Winter2026!Acme", "Winter2026!Acme"),
        ("Root login is admin and the password is correcthorsebattery", "correcthorsebattery"),
        ("Connect with postgres://billing:S3cr3tPa55@db.acme.internal:5432/invoices", "S3cr3tPa55"),
        (f"Deploy key for the bastion host:\n{PRIVATE_KEY}\nstored in the vault", "MIIEowIBAAKCAQEA"),
        (f"export AWS_SECRET_ACCESS_KEY={AWS_SECRET}", AWS_SECRET),
        ("The vpn password: correct horse battery staple", "horse battery"),
    ],
)
def test_secrets_are_redacted_from_content(client: TestClient, content: str, secret: str) -> None:
    created = store(client, content)

    record = get(client, created["id"])

    assert secret not in record["content"]
    assert re.search(PLACEHOLDER, record["content"])
    assert record["content_hash"] == created["content_hash"] == expected_hash(record["content"])
    assert created["content_hash"] != expected_hash(content)


def test_the_text_around_a_secret_survives(client: TestClient) -> None:
    created = store(client, f"Rotate {AWS_KEY} before the Globex audit on Friday")
    content = get(client, created["id"])["content"]

    assert re.fullmatch(rf"Rotate {PLACEHOLDER} before the Globex audit on Friday", content)


def test_the_placeholder_is_keyed_by_the_deployment(client: TestClient) -> None:
    """Without ZENGRAM_SCRUB_KEY the digest key derives from the API key: a test can predict it, nobody without
    the key can."""
    created = store(client, f"Rotate {AWS_KEY} before the Globex audit on Friday")

    assert get(client, created["id"])["content"] == TEST_SCRUBBER.scrub(
        f"Rotate {AWS_KEY} before the Globex audit on Friday")


def test_ordinary_text_is_left_alone(client: TestClient) -> None:
    text = "Reset your password via the portal; the API key page is under Settings > Developers"

    created = store(client, text)

    assert get(client, created["id"])["content"] == text
    assert created["content_hash"] == expected_hash(text)


def test_ordinary_phrases_that_were_once_redacted_are_two_memories(client: TestClient) -> None:
    authentication = store(client, "Token authentication failed on server alpha")
    validation = store(client, "Token validation failed on server alpha")

    assert validation["deduplicated"] is False
    assert authentication["id"] != validation["id"]
    assert get(client, validation["id"])["content"] == "Token validation failed on server alpha"
    assert get(client, authentication["id"])["content"] == "Token authentication failed on server alpha"


def test_writes_differing_only_in_the_secret_are_two_memories(client: TestClient) -> None:
    first = store(client, "The Acme SFTP password: Autumn2025!")

    second = store(client, "The Acme SFTP password: Spring2026!")

    assert second["deduplicated"] is False and second["id"] != first["id"]
    assert second["content_hash"] != first["content_hash"]
    assert get(client, first["id"])["content"] != get(client, second["id"])["content"]


def test_the_same_text_with_the_same_secret_still_dedups(client: TestClient) -> None:
    first = store(client, "The Acme SFTP password: Autumn2025!")

    again = store(client, "The Acme SFTP password: Autumn2025!", expect=200)

    assert again["deduplicated"] is True and again["id"] == first["id"]


def test_facts_whose_keys_differ_only_in_a_secret_do_not_supersede_each_other(client: TestClient) -> None:
    one = store(client, "Acme's first webhook", type="fact", key="webhook token=a1b2c3d4e5f6g7h8")
    two = store(client, "Acme's second webhook", type="fact", key="webhook token=z9y8x7w6v5u4t3s2")

    assert two["supersedes"] is None
    assert get(client, one["id"])["active"] is True
    # Keys are looked up scrubbed: the key as written finds its fact, and only it.
    found = query(client, type="facts", key="webhook token=a1b2c3d4e5f6g7h8")["results"]
    assert [row["id"] for row in found] == [one["id"]]


def test_secrets_are_redacted_from_nested_metadata(client: TestClient) -> None:
    metadata = {
        "env": {"OPENAI_API_KEY": OPENAI_KEY, "region": "eu-west-1", "AWS_SECRET_ACCESS_KEY": AWS_SECRET},
        "notes": [f"aws {AWS_KEY}", "password=hunter2hunter2"],
        "vpn": {"password": "correct horse battery staple"},
        "attempts": 3,
    }

    created = store(client, "Environment variables for the Acme worker", metadata=metadata)

    stored = get(client, created["id"])["metadata"]
    flat = repr(stored)
    for secret in (OPENAI_KEY, AWS_KEY, AWS_SECRET, "hunter2hunter2", "horse"):
        assert secret not in flat
    assert stored["env"]["region"] == "eu-west-1"
    assert stored["attempts"] == 3
    assert re.fullmatch(f"aws {PLACEHOLDER}", stored["notes"][0])
    assert re.fullmatch(PLACEHOLDER, stored["vpn"]["password"])


def test_secrets_in_metadata_keys_are_redacted(client: TestClient) -> None:
    created = store(client, "Tokens the Acme CI bot may use", metadata={"tokens": {GITHUB_TOKEN: "ci-bot"}})

    assert GITHUB_TOKEN not in repr(get(client, created["id"])["metadata"])


def test_key_subject_and_status_value_are_scrubbed(client: TestClient) -> None:
    fact = store(client, "The Acme deploy token", type="fact", key=f"deploy-token {GITHUB_TOKEN}")
    status = store(client, "Vault token status", type="status", subject=f"vault {GITHUB_TOKEN}",
                   status_value=f"rotated to {GITHUB_TOKEN}")

    assert GITHUB_TOKEN not in get(client, fact["id"])["key"]
    assert GITHUB_TOKEN not in get(client, status["id"])["subject"]
    assert GITHUB_TOKEN not in get(client, status["id"])["status_value"]


def test_the_delete_reason_is_scrubbed(client: TestClient) -> None:
    created = store(client, "Acme's old SFTP host")

    response = client.request("DELETE", f"/memory/{created['id']}",
                              json={"reason": f"leaked together with {GITHUB_TOKEN}"})

    assert response.status_code == 200 and GITHUB_TOKEN not in response.text
    exported = body_of(client.get("/export", params={"active_only": "false"}))
    assert GITHUB_TOKEN not in exported and "leaked together with [REDACTED:github-token:" in exported


def test_client_fingerprints_are_scrubbed(client: TestClient) -> None:
    response = client.put("/clients/acme-corp", json={
        "name": f"Acme {GITHUB_TOKEN}", "aliases": ["Acme", f"password: {AWS_SECRET}"],
        "people": ["Jane Doe"], "domains": ["acme.com"], "keywords": [OPENAI_KEY, "anvils"],
    })

    assert response.status_code in (200, 201), response.text
    for answer in (response.text, client.get("/clients/acme-corp").text, client.get("/clients").text):
        for secret in (GITHUB_TOKEN, AWS_SECRET, OPENAI_KEY):
            assert secret not in answer
    fingerprint = client.get("/clients/acme-corp").json()
    assert "Acme" in fingerprint["aliases"] and "anvils" in fingerprint["keywords"]
    assert fingerprint["people"] == ["Jane Doe"]


def test_import_scrubs_every_field_and_drops_entities_named_by_a_secret(client: TestClient) -> None:
    response = client.post("/export/import", json={"operator_approved": True, "data": [{
        "id": "3c1d2b4a-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "type": "status", "source_agent": "import",
        "content": f"Vault rotated, new root token {GITHUB_TOKEN}", "subject": f"vault {GITHUB_TOKEN}",
        "status_value": f"password: {AWS_SECRET}", "metadata": {"AWS_SECRET_ACCESS_KEY": AWS_SECRET},
        "deleted_at": "2026-03-02T00:00:00Z", "deleted_by": "import", "delete_reason": f"leaked {OPENAI_KEY}",
        "entities": [{"name": GITHUB_TOKEN, "type": "technology"}, {"name": "Vault", "type": "technology"}],
    }]})

    assert response.status_code == 200 and response.json()["imported"] == 1, response.text
    exported = body_of(client.get("/export", params={"active_only": "false"}))
    for secret in (GITHUB_TOKEN, AWS_SECRET, OPENAI_KEY):
        assert secret not in exported
    record = get(client, "3c1d2b4a-5e6f-4a7b-8c9d-0e1f2a3b4c5d")
    assert [entity["name"] for entity in record["entities"]] == ["Vault"]


@pytest.fixture
def mechanics_client(settings: Settings, hashing_container: Container) -> Iterator[TestClient]:
    """The app with the cheap deterministic embedder: what comes back does not depend on meaning here."""
    with TestClient(build_embedded_app(settings, hashing_container), headers={"x-api-key": API_KEY}) as client:
        yield client


def test_no_corpus_credential_comes_back_through_any_read(mechanics_client: TestClient) -> None:
    """Every credential of the corpus stored as content (events), as a fact's metadata and as a status value,
    then read back through GET, query, search, export and briefing."""
    client = mechanics_client
    ids = []
    for index, credential in enumerate(POSITIVES):
        ids.append(store(client, credential.text, client_id="acme-corp")["id"])
        store(client, f"Acme config note {index}", type="fact", key=f"config-{index}",
              metadata={"note": credential.text}, client_id="acme-corp")
        store(client, f"Acme rotation {index}", type="status", subject=f"rotation-{index}",
              status_value=credential.text[:256], client_id="acme-corp")
    reads = [body_of(client.get(f"/memory/{memory_id}")) for memory_id in ids]
    reads += [body_of(client.get("/memory/query", params={"type": kind, "limit": 500}))
              for kind in ("events", "facts", "statuses")]
    # Search by each secret itself (its echoed `query` left out: that is the caller's own text, not stored data).
    reads += [json.dumps(search(client, credential.secret[:2000], format="full", limit=100)["results"])
              for credential in POSITIVES[::6]]
    reads.append(body_of(client.get("/export", params={"active_only": "false", "limit": 5000})))
    reads.append(body_of(client.get("/briefing", params={"since": SINCE, "format": "full", "limit": 500})))

    assert len(json.loads(reads[-2])["memories"]) == 3 * len(POSITIVES)
    assert not any(UUID.fullmatch(credential.secret) for credential in POSITIVES)
    everything = "\n".join(json.dumps(without_generated_identifiers(json.loads(read))) for read in reads)
    for credential in POSITIVES:
        assert json.dumps(credential.secret)[1:-1] not in everything, credential.detector


def test_a_secret_is_never_searchable_or_returned(client: TestClient) -> None:
    store(client, f"The OpenAI key for the Acme summariser is {OPENAI_KEY}")

    assert search_ids(client, "anything", entity=OPENAI_KEY) == []
    body = search(client, OPENAI_KEY, format="full")
    assert body["results"]
    assert all(OPENAI_KEY not in repr(hit) for hit in body["results"])
    assert all("keyword" not in hit["retrieval_sources"] for hit in body["results"])
