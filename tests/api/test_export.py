"""GET /export (whole records, oldest first, paged) and POST /export/import (operator-approved restore)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import Container, build_container
from zengram.embedded.app import build_embedded_app
from zengram.kernel.ports import Embedder
from zengram.memory.domain.models import ImportOutcome, Memory
from zengram.settings import Settings

from tests.api.helpers import assert_error, expected_hash, get, search_ids, store
from tests.support import API_KEY, TickingClock, pending_index

NEW_ID = "7d1f4b0e-2a3c-4d5e-8f60-718293a4b5c6"


def export(client: TestClient, **params: Any) -> dict[str, Any]:
    response = client.get("/export", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["count"] == len(body["memories"])
    return body


def import_(client: TestClient, data: list[Any], *, expect: int = 200, **body: Any) -> dict[str, Any]:
    response = client.post("/export/import", json={"operator_approved": True, "data": data, **body})
    assert response.status_code == expect, response.text
    result: dict[str, Any] = response.json()
    return result


def record(content: str, **fields: Any) -> dict[str, Any]:
    return {"type": "event", "content": content, "source_agent": "claude-code", "client_id": "acme-corp", **fields}


# -- GET /export ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("params", "field"), [
    ({"limit": "0"}, "limit"), ({"limit": "5001"}, "limit"), ({"offset": "-1"}, "offset"),
    ({"type": "opinion"}, "type"), ({"since": "last week"}, "since"), ({"active_only": "maybe"}, "active_only"),
    ({"client_id": "-x"}, "client_id"),
])
def test_export_refuses_invalid_parameters(shared_client: TestClient, params: dict[str, str], field: str) -> None:
    assert_error(shared_client.get("/export", params=params), 400, field)


def test_export_and_import_need_the_api_key(shared_client: TestClient) -> None:
    assert_error(shared_client.get("/export", headers={"x-api-key": "wrong"}), 401)
    assert_error(shared_client.post("/export/import", json={"operator_approved": True, "data": []},
                                    headers={"x-api-key": ""}), 401)


def test_export_is_newest_first_with_filters_and_paging(client: TestClient, clock: TickingClock) -> None:
    first = store(client, "Acme kickoff", client_id="acme-corp")
    fact = store(client, "Acme uses Next.js 14", type="fact", key="stack", client_id="acme-corp")
    other = store(client, "Globex kickoff", client_id="globex")
    clock.advance(days=1)
    newer = store(client, "Acme uses Next.js 15", type="fact", key="stack", client_id="acme-corp")
    gone = store(client, "Acme churned", client_id="acme-corp")
    assert client.request("DELETE", f"/memory/{gone['id']}").status_code == 200

    live = export(client)
    assert [r["id"] for r in live["memories"]] == [newer["id"], other["id"], first["id"]]
    assert live["has_more"] is False and live["offset"] == 0 and live["limit"] == 1000
    assert live["total"] == live["count"] == 3
    assert live["filters"] == {"client_id": None, "type": None, "since": None, "active_only": True}
    assert live["memories"][2] == get(client, first["id"])  # the full record shape

    everything = export(client, active_only="false", client_id="acme-corp")
    assert [r["id"] for r in everything["memories"]] == [gone["id"], newer["id"], fact["id"], first["id"]]
    assert everything["memories"][2]["superseded_by"] == newer["id"] and everything["memories"][0]["deleted_at"]

    page = export(client, active_only="false", limit=2, offset=1)
    assert [r["id"] for r in page["memories"]] == [newer["id"], other["id"]] and page["has_more"] is True
    last = export(client, active_only="false", limit=2, offset=4)
    assert [r["id"] for r in last["memories"]] == [first["id"]] and last["has_more"] is False
    assert [r["id"] for r in export(client, type="fact", active_only="false")["memories"]] == [newer["id"], fact["id"]]
    oldest = export(client, active_only="false", order="oldest")  # ours: stable paging while memories arrive
    assert [r["id"] for r in oldest["memories"]] == [first["id"], fact["id"], other["id"], newer["id"], gone["id"]]
    since = clock.now().strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert export(client, since=since)["count"] == 0
    assert export(client, since="2026-03-02T00:00:00Z")["count"] == 1


def test_export_limit_5000_is_accepted(shared_client: TestClient) -> None:
    assert export(shared_client, limit=5000)["limit"] == 5000


# -- POST /export/import: refusals -----------------------------------------------------------------------------


def test_import_without_operator_approval_is_403(shared_client: TestClient) -> None:
    for body in ({"data": [record("x")]}, {"operator_approved": False, "data": [record("x")]}):
        message = assert_error(shared_client.post("/export/import", json=body), 403, "operator_approved")
        assert "operator_approved=true" in message
    assert_error(shared_client.post("/export/import", params={"operator_approved": "false"},
                                    json={"data": [record("x")]}), 403)


def test_operator_approval_as_query_parameter(client: TestClient) -> None:
    response = client.post("/export/import", params={"operator_approved": "true"},
                           json={"data": [record("Approved through the query")]})
    assert response.status_code == 200 and response.json()["imported"] == 1


@pytest.mark.parametrize(("body", "field"), [
    ({"operator_approved": True}, "data"),
    ({"operator_approved": True, "data": "nope"}, "data"),
    ({"operator_approved": True, "data": [record("x")] * 501}, "data"),
    ({"operator_approved": "perhaps", "data": []}, "operator_approved"),
    ({"operator_approved": "yes", "data": [record("x")]}, "operator_approved"),  # only JSON true approves
    ({"operator_approved": 1, "data": [record("x")]}, "operator_approved"),
])
def test_import_refuses_an_invalid_body(shared_client: TestClient, body: dict[str, Any], field: str) -> None:
    assert_error(shared_client.post("/export/import", json=body), 400, field)


def test_import_of_500_records_is_accepted(client: TestClient) -> None:
    result = import_(client, [record(f"Bulk imported note number {n}") for n in range(500)])
    assert result["imported"] == 500 and result["failed"] == 0
    assert export(client)["count"] == 500


def test_bad_records_fail_alone_by_index(client: TestClient) -> None:
    result = import_(client, [
        record("Good one"),
        {"type": "opinion", "content": "x", "source_agent": "claude-code"},
        record("", id="bad-content-id"),
        "not an object",
        record("Key on an event", key="k"),
        record("Active but deleted", active=True, deleted_at="2026-03-01T00:00:00Z"),
        record("Bad time", created_at=1711584000),
        record("Good two", id=NEW_ID),
    ])
    assert (result["imported"], result["skipped"], result["failed"]) == (2, 0, 6)
    statuses = {item["index"]: item for item in result["results"]}
    assert [statuses[i]["status"] for i in range(8)] == ["imported"] + ["failed"] * 6 + ["imported"]
    assert statuses[1]["error"].startswith("type:")
    assert statuses[2]["error"].startswith("content:") and statuses[2]["id"] == "bad-content-id"
    assert statuses[3]["error"].startswith("record:")
    assert statuses[4]["error"].startswith("key:")
    assert statuses[5]["error"].startswith("active:")
    assert statuses[6]["error"].startswith("created_at:")
    assert statuses[7]["id"] == NEW_ID and get(client, NEW_ID)["content"] == "Good two"


# -- POST /export/import: what it stores ---------------------------------------------------------------------


def test_import_keeps_ids_and_every_field(client: TestClient) -> None:
    given = record(
        "Acme renewed for two years", id=NEW_ID, type="decision", importance="critical", category="semantic",
        knowledge_category="strategy", metadata={"deal": {"years": 2}}, observed_by=["claude-code", "n8n"],
        observation_count=3, access_count=9, last_accessed_at="2026-02-03T00:00:00.000Z",
        last_observed_at="2026-02-02T00:00:00.000Z", created_at="2026-02-01T00:00:00.000Z",
        updated_at="2026-02-04T00:00:00.000Z", valid_from="2026-02-01T00:00:00.000Z", confidence=0.8,
        consolidated=True, revision=5, content_hash="ignored",
    )
    result = import_(client, [given])
    assert result["results"] == [{"index": 0, "status": "imported", "id": NEW_ID}]
    stored = get(client, NEW_ID)
    expected = {**given, "content_hash": expected_hash(given["content"]), "active": True}
    assert {name: stored[name] for name in expected} == expected
    assert stored["valid_to"] is None and stored["deleted_at"] is None


def test_import_scrubs_credentials_and_recomputes_the_hash(client: TestClient) -> None:
    result = import_(client, [record("Deploy with password: hunter2secret please", id=NEW_ID,
                                     metadata={"api_key": "sk-proj-abcdefghijklmnopqrstuvwxyz012345"},
                                     content_hash="0000000000000000")])
    assert result["imported"] == 1
    stored = get(client, NEW_ID)
    assert "hunter2secret" not in stored["content"] and "[REDACTED:password:" in stored["content"]
    assert stored["content_hash"] == expected_hash(stored["content"])
    assert "sk-proj" not in str(stored["metadata"])


def test_import_dedups_by_id_content_and_key(client: TestClient) -> None:
    existing = store(client, "Acme uses Next.js 14", type="fact", key="stack", client_id="acme-corp")
    result = import_(client, [
        record("Anything", id=existing["id"]),
        record("Acme uses Next.js 14", type="fact", key="other", source_agent="n8n"),
        record("Acme uses Next.js 15", type="fact", key="stack"),
        record("Acme uses Next.js 14", type="fact", key="stack", client_id="globex"),  # another tenant
        record("Twice in one batch"),
        record("Twice in one batch"),
        record("Acme uses Next.js 15", type="fact", key="stack", active=False, superseded_by=existing["id"]),
    ])
    assert (result["imported"], result["skipped"], result["failed"]) == (3, 4, 0)
    reasons = {item["index"]: item.get("reason", "") for item in result["results"]}
    assert reasons[0].startswith("duplicate id")
    assert reasons[1].startswith("duplicate content") and existing["id"] in reasons[1]
    assert reasons[2].startswith("key 'stack' is held") and existing["id"] in reasons[2]
    assert reasons[5].startswith("duplicate content")
    assert [item["status"] for item in result["results"]][3:5] == ["imported", "imported"]
    assert get(client, existing["id"])["active"] is True  # nothing was superseded


def test_imported_memories_are_searchable_and_deleted_ones_are_not(client: TestClient) -> None:
    result = import_(client, [
        record("Acme's data warehouse runs on Snowflake", id=NEW_ID),
        record("Acme's billing system is Stripe", active=False, superseded_by=NEW_ID, type="fact", key="billing"),
        record("Acme's CRM is Salesforce", deleted_at="2026-03-01T00:00:00Z", deleted_by="claude-code"),
    ])
    assert result["imported"] == 3 and result["indexed"] is True
    superseded_id, deleted_id = result["results"][1]["id"], result["results"][2]["id"]
    assert NEW_ID in search_ids(client, "which data warehouse does Acme use")
    assert superseded_id not in search_ids(client, "Acme billing system")
    assert superseded_id in search_ids(client, "Acme billing system", include_superseded="true")
    assert deleted_id not in search_ids(client, "Acme CRM Salesforce", include_superseded="true")
    assert get(client, deleted_id)["active"] is False


def test_export_import_round_trip_gives_identical_records(
    client: TestClient, clock: TickingClock, tmp_path: Path, minilm: Embedder
) -> None:
    store(client, "Acme kickoff with password: hunter2secret", client_id="acme-corp", metadata={"a": [1, 2]})
    store(client, "Acme uses Next.js 14", type="fact", key="stack", client_id="acme-corp")
    clock.advance(days=1)
    store(client, "Acme uses Next.js 14", type="fact", source_agent="n8n", client_id="acme-corp", expect=200)
    store(client, "Acme uses Next.js 15", type="fact", key="stack", client_id="acme-corp")
    status = store(client, "Deploy is green", type="status", subject="deploy", status_value="green")
    gone = store(client, "Acme churned", client_id="acme-corp")
    client.request("DELETE", f"/memory/{gone['id']}", json={"reason": "wrong"})
    client.patch(f"/memory/{status['id']}", json={"importance": "high"})
    search_ids(client, "Acme Next.js")  # access counters
    original = export(client, active_only="false")
    assert original["count"] == 5

    settings = Settings(data_dir=tmp_path / "empty", api_key=API_KEY)
    container = build_container(settings, embedder=minilm, clock=TickingClock())
    try:
        with TestClient(build_embedded_app(settings, container), headers={"x-api-key": API_KEY}) as empty:
            result = import_(empty, original["memories"])
            assert result["imported"] == 5 and result["failed"] == result["skipped"] == 0
            assert export(empty, active_only="false")["memories"] == original["memories"]
            again = import_(empty, original["memories"])
            assert again["skipped"] == 5  # importing the same export twice changes nothing
    finally:
        container.close()


def test_a_record_the_store_cannot_take_fails_alone_and_the_rest_are_indexed_and_linked(
    client: TestClient, container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a store that breaks down on the second record of a batch
    real_import = container.records.import_memory
    calls: list[str] = []

    def failing_second(memory: Memory) -> ImportOutcome:
        calls.append(memory.id)
        if len(calls) == 2:
            raise RuntimeError("disk on fire")
        return real_import(memory)

    monkeypatch.setattr(container.records, "import_memory", failing_second)

    # When the batch is imported
    result = import_(client, [
        record("Acme's warehouse runs on Snowflake", id="stored-1"),
        record("Never stored", id="never-stored"),
        record("Acme pays through Stripe", id="stored-2"),
    ])

    # Then that record fails alone, reported by index without the internal cause; the batch went on
    assert (result["imported"], result["failed"]) == (2, 1)
    failed = result["results"][1]
    assert failed["status"] == "failed" and failed["id"] == "never-stored" and failed["error"].startswith("record:")
    assert "disk on fire" not in str(result)
    # And the stored records are whole: searchable, linked to their entities, nothing left to repair
    assert client.get("/memory/never-stored").status_code == 404
    assert pending_index(container) == []
    assert "stored-1" in search_ids(client, "Acme warehouse Snowflake")
    linked = client.get("/entities/Stripe/memories").json()["memories"]
    assert [memory["id"] for memory in linked] == ["stored-2"]
