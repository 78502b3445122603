"""Client fingerprints over HTTP (PUT/GET/DELETE /clients/{client_id}, GET /clients), and client_id
auto-resolution on POST /memory (semantics.md) on the embedded app."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.helpers import TIMESTAMP, assert_error, get, store

ACME = {"name": "Acme Corporation", "aliases": ["Acme", "Acme Corp"], "people": ["Jane Doe", "Raúl Núñez"],
        "domains": ["acme.com"], "keywords": ["anvils", "rockets"]}
GLOBEX = {"aliases": ["Globex"], "people": ["Hank Scorpio"], "domains": ["globex.io"], "keywords": ["rockets"]}


def put_client(client: TestClient, client_id: str, body: dict[str, Any], expect: int = 201) -> dict[str, Any]:
    response = client.put(f"/clients/{client_id}", json=body)
    assert response.status_code == expect, response.text
    result: dict[str, Any] = response.json()
    return result


# -- managing fingerprints ------------------------------------------------------------------------------


def test_put_creates_then_replaces_keeping_created_at(client: TestClient) -> None:
    created = put_client(client, "acme-corp", ACME)
    assert created == {"client_id": "acme-corp", **ACME, "created_at": created["created_at"],
                       "updated_at": created["created_at"], "revision": 1}
    assert TIMESTAMP.match(created["created_at"])

    replaced = put_client(client, "acme-corp", {"aliases": ["ACME Inc"]}, expect=200)
    assert replaced["revision"] == 2
    assert replaced["created_at"] == created["created_at"] and replaced["updated_at"] > created["updated_at"]
    assert (replaced["name"], replaced["aliases"], replaced["people"]) == (None, ["ACME Inc"], [])  # whole replace
    assert client.get("/clients/acme-corp").json() == replaced


def test_list_is_ordered_by_client_id(client: TestClient) -> None:
    assert client.get("/clients").json() == {"count": 0, "clients": []}
    put_client(client, "globex", GLOBEX)
    put_client(client, "acme-corp", ACME)
    listed = client.get("/clients").json()
    assert listed["count"] == 2
    assert [c["client_id"] for c in listed["clients"]] == ["acme-corp", "globex"]
    assert listed["clients"][1]["people"] == ["Hank Scorpio"]


def test_delete_removes_and_a_second_delete_is_404(client: TestClient) -> None:
    put_client(client, "acme-corp", ACME)
    response = client.delete("/clients/acme-corp")
    assert response.status_code == 200 and response.json() == {"client_id": "acme-corp", "deleted": True}
    assert_error(client.get("/clients/acme-corp"), 404)
    assert_error(client.delete("/clients/acme-corp"), 404)


def test_entries_are_trimmed_and_exact_repeats_dropped(client: TestClient) -> None:
    stored = put_client(client, "acme-corp", {"aliases": [" Acme ", "Acme", "acme"], "name": "  Acme  "})
    assert stored["aliases"] == ["Acme", "acme"] and stored["name"] == "Acme"


def test_unknown_client_is_404(shared_client: TestClient) -> None:
    message = assert_error(shared_client.get("/clients/no-such-client"), 404)
    assert "no-such-client" in message


@pytest.mark.parametrize(("client_id", "body", "field"), [
    ("-starts-with-dash", ACME, "client_id"),
    ("has space", ACME, "client_id"),
    ("x" * 129, ACME, "client_id"),
    ("global", ACME, "client_id"),
    ("acme-corp", {"aliases": ["a"] * 51}, "aliases"),
    ("acme-corp", {"aliases": ["x" * 101]}, "aliases.0"),
    ("acme-corp", {"people": ["Jane", "  "]}, "people"),
    ("acme-corp", {"domains": "acme.com"}, "domains"),
    ("acme-corp", {"keywords": [7]}, "keywords.0"),
    ("acme-corp", {"name": "n" * 201}, "name"),
    ("acme-corp", {"name": "   "}, "name"),
    ("acme-corp", ["not", "an", "object"], "body"),
])
def test_bad_input_is_400_naming_the_field_and_writes_nothing(
    shared_client: TestClient, client_id: str, body: Any, field: str
) -> None:
    assert_error(shared_client.put(f"/clients/{client_id}", json=body), 400, field)
    assert shared_client.get("/clients").json()["count"] == 0


def test_fingerprint_limits_are_inclusive(shared_client: TestClient) -> None:
    body = {"name": "n" * 200, "aliases": [f"alias {i}" for i in range(50)], "keywords": ["k" * 100]}
    stored = put_client(shared_client, "limits-co", body)
    assert len(stored["aliases"]) == 50
    assert shared_client.delete("/clients/limits-co").status_code == 200


def test_clients_need_the_api_key(shared_client: TestClient) -> None:
    for method, path in [("PUT", "/clients/acme"), ("GET", "/clients/acme"), ("DELETE", "/clients/acme"),
                         ("GET", "/clients")]:
        assert_error(shared_client.request(method, path, json=ACME, headers={"x-api-key": "wrong"}), 401)


# -- client_id auto-resolution on POST /memory ----------------------------------------------------------


@pytest.fixture
def known_clients(client: TestClient) -> TestClient:
    put_client(client, "acme-corp", ACME)
    put_client(client, "globex", GLOBEX)
    return client


def stored_client_id(client: TestClient, content: str, **fields: Any) -> str:
    client_id: str = get(client, store(client, content, **fields)["id"])["client_id"]
    return client_id


@pytest.mark.parametrize(("content", "fields", "expected"), [
    ("Call with Acme about the renewal", {}, "acme-corp"),  # missing client_id: resolved
    ("Invoice sent to billing@acme.com", {"client_id": "global"}, "acme-corp"),  # "global" counts as missing
    ("Jane Doe ordered more anvils", {}, "acme-corp"),  # two weak hints reach the threshold
    ("Renewal call with ACME", {"client_id": "initech"}, "initech"),  # an explicit client is never overridden
    ("Acme and Globex are merging", {}, "global"),  # two clients pass: ambiguous
    ("rockets launched on schedule", {}, "global"),  # one shared keyword: below the threshold
    ("Acmeville approved the plan", {}, "global"),  # partial word
])
def test_store_resolves_a_missing_or_global_client_id(
    known_clients: TestClient, content: str, fields: dict[str, Any], expected: str
) -> None:
    assert stored_client_id(known_clients, content, **fields) == expected


def test_resolution_follows_fingerprint_changes_at_once(client: TestClient) -> None:
    assert stored_client_id(client, "Kickoff with Initech on Monday") == "global"
    put_client(client, "initech", {"aliases": ["Initech"]})
    assert stored_client_id(client, "Initech signed the SOW") == "initech"
    client.delete("/clients/initech")
    assert stored_client_id(client, "Initech asked for a discount") == "global"


def test_resolved_client_scopes_dedup_and_search_filters(known_clients: TestClient) -> None:
    first = store(known_clients, "Acme renewal is due in May")
    again = store(known_clients, "Acme renewal is due in May", client_id="acme-corp", expect=200)
    assert again["deduplicated"] is True and again["id"] == first["id"]
    hits = known_clients.get("/memory/search", params={"q": "renewal", "client_id": "acme-corp"}).json()
    assert [hit["id"] for hit in hits["results"]] == [first["id"]]


def test_import_keeps_records_exactly(known_clients: TestClient) -> None:
    """POST /export/import restores records as exported: a "global" record stays global."""
    response = known_clients.post("/export/import", json={"operator_approved": True, "data": [
        {"type": "event", "content": "Acme kickoff moved to Tuesday", "source_agent": "import"}]})
    assert response.status_code == 200 and response.json()["imported"] == 1, response.text
    assert get(known_clients, response.json()["results"][0]["id"])["client_id"] == "global"
