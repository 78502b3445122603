"""Upstream Zengram's Python SDK (sdk/python/zengram @0f60452; docs: docs/spec/zengram-v4-wire.md §4b) through the
emulated API Gateway: each test sends the requests its methods send (`x-api-key`, undefined fields dropped) and
checks the fields they read. tests/compat/test_upstream_clients.py does the same in-process; here every call goes
through the authorizer into the function's container, with records on moto's DynamoDB and search on OpenSearch."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.compat.test_upstream_clients import call
from tests.e2e.helpers import eventually, unique

pytestmark = pytest.mark.xdist_group("e2e")  # one worker, one cloud (conftest.py)

AGENT = "sdk-python"


def sdk_store(api: httpx.Client, expect: int = 201, **fields: Any) -> dict[str, Any]:
    """`BrainClient.store(...)`: its keyword arguments as the body, None left out."""
    body = {"source_agent": AGENT, **fields}
    return call(api, "POST", "/memory", expect, json={k: v for k, v in body.items() if v is not None})


def sdk_search(api: httpx.Client, query: str, **params: Any) -> dict[str, Any]:
    """`BrainClient.search(...)`: `format` only when given."""
    return call(api, "GET", "/memory/search", params={"q": query, **params})


def found(api: httpx.Client, query: str, memory_id: str, **params: Any) -> dict[str, Any]:
    """The search answer once the index shows `memory_id` (near-real-time)."""
    return eventually(lambda: sdk_search(api, query, **params),
                      lambda body: memory_id in [hit["id"] for hit in body["results"]])


@pytest.fixture
def client_id() -> str:
    return unique("acme")


def test_store_dedup_corroborate_and_supersede(api: httpx.Client, client_id: str) -> None:
    first = sdk_store(api, type="fact", content=f"{client_id} hosts its frontend on Vercel", client_id=client_id,
                      key="hosting", importance="high")
    assert first["deduplicated"] is False and first["supersedes"] is None
    assert {"id", "type", "content_hash"} <= set(first)

    again = sdk_store(api, 200, type="fact", content=f"{client_id} hosts its frontend on Vercel",
                      client_id=client_id, key="hosting")
    assert (again["id"], again["deduplicated"], again["observation_count"]) == (first["id"], True, 1)
    other_agent = sdk_store(api, 200, type="fact", content=f"{client_id} hosts its frontend on Vercel",
                            client_id=client_id, key="hosting", source_agent="n8n")
    assert other_agent["corroborated"] is True and other_agent["observed_by"] == [AGENT, "n8n"]

    newer = sdk_store(api, type="fact", content=f"{client_id} moved its frontend to Netlify", client_id=client_id,
                      key="hosting")
    assert newer["supersedes"] == first["id"]
    old = call(api, "GET", f"/memory/{first['id']}")
    assert old["active"] is False and old["superseded_by"] == newer["id"]
    facts = call(api, "GET", "/memory/query", params={"type": "facts", "client_id": client_id, "key": "hosting"})
    assert [row["id"] for row in facts["results"]] == [newer["id"]]
    unkeyed = sdk_store(api, type="fact", content=f"{client_id}'s fiscal year ends in June", client_id=client_id)
    assert unkeyed["warning"].startswith("Fact stored without key")


def test_search_in_every_format(api: httpx.Client, client_id: str) -> None:
    stored = sdk_store(api, type="decision", content=f"{client_id} moves billing to Stripe\nafter the audit",
                       client_id=client_id, importance="high")
    query = "billing Stripe audit"

    default = found(api, query, stored["id"], client_id=client_id)  # the SDK sends no format
    assert {"query", "count", "results"} <= set(default)
    hit = default["results"][0]
    assert hit["id"] == stored["id"] and hit["text"] == f"{client_id} moves billing to Stripe\nafter the audit"
    for read in ("score", "effective_score", "type", "source_agent", "client_id", "importance", "created_at",
                 "confidence", "entities"):
        assert read in hit, read

    compact = sdk_search(api, query, client_id=client_id, format="compact")["results"][0]
    assert compact["id"] == stored["id"] and compact["content"].startswith(f"{client_id} moves billing")
    index = sdk_search(api, query, client_id=client_id, format="index")["results"][0]
    assert set(index) == {"id", "effective_score", "type", "summary", "importance", "client_id", "created_at"}
    assert index["summary"] == f"{client_id} moves billing to Stripe"
    full = sdk_search(api, query, client_id=client_id, format="full")["results"][0]
    assert full["retrieval_sources"] and full["text"] == hit["text"]
    unknown = sdk_search(api, query, client_id=client_id, format="yaml")["results"][0]
    assert unknown["text"] == hit["text"]  # upstream answers an unknown format with the whole record


def test_query_briefing_and_stats(api: httpx.Client, client_id: str) -> None:
    since = (datetime.now(UTC) - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    event = sdk_store(api, type="event", content=f"{client_id} go-live happened", client_id=client_id)
    decision = sdk_store(api, type="decision", content=f"{client_id} keeps weekly releases", client_id=client_id,
                         source_agent="cursor")
    status = sdk_store(api, type="status", content=f"{client_id} rollout is green", client_id=client_id,
                       subject="rollout", status_value="green")

    events = call(api, "GET", "/memory/query", params={"type": "events", "client_id": client_id})
    assert [row["id"] for row in events["results"]] == [event["id"]]
    statuses = call(api, "GET", "/memory/query", params={"type": "statuses", "client_id": client_id})
    assert [row["id"] for row in statuses["results"]] == [status["id"]]

    briefing = call(api, "GET", "/briefing", params={"since": since, "agent": AGENT, "limit": 200})
    assert briefing["requesting_agent"] == AGENT and briefing["generated_at"] and "summary" in briefing
    listed = {entry["id"] for key in ("events", "decisions", "status_changes") for entry in briefing.get(key, [])}
    assert decision["id"] in listed  # another agent's work; the requesting agent's own is left out
    summary = call(api, "GET", "/briefing", params={"since": since, "format": "summary"})
    assert {"top_events", "top_decisions", "top_facts", "top_statuses"} <= set(summary)

    stats = call(api, "GET", "/stats")
    for read in ("total_memories", "vectors_count", "active", "superseded", "by_type", "entities"):
        assert read in stats, read
    assert stats["total_memories"] >= 3


def test_entities(api: httpx.Client, client_id: str) -> None:
    stored = sdk_store(api, type="event", content=f"Deployed the {client_id} billing service", client_id=client_id)

    entity = call(api, "GET", f"/entities/{client_id}")
    assert entity["entity_type"] == "client" and entity["canonical_name"] == client_id
    linked = call(api, "GET", f"/entities/{client_id}/memories", params={"limit": 20})
    assert [link["memory_id"] for link in linked["memory_links"]] == [stored["id"]]
    listed = call(api, "GET", "/entities", params={"type": "agent", "limit": 500})["entities"]
    assert AGENT in {row["canonical_name"] for row in listed}
    assert {"id", "canonical_name", "entity_type", "mention_count", "aliases"} <= set(listed[0])
    assert call(api, "GET", "/entities/stats")["top_mentioned"]
    assert call(api, "GET", f"/entities/{unique('nobody')}", 404)["error"]


def test_export_and_import(api: httpx.Client, client_id: str) -> None:
    first = sdk_store(api, type="event", content=f"{client_id} kickoff", client_id=client_id)
    second = sdk_store(api, type="event", content=f"{client_id} contract signed", client_id=client_id)

    exported = call(api, "GET", "/export", params={"client_id": client_id, "limit": 500})
    assert {m["id"] for m in exported["memories"]} == {first["id"], second["id"]}
    assert (exported["total"], exported["has_more"]) == (2, False)

    data = [{"content": f"{client_id} note from the old brain", "client_id": client_id},
            {"content": f"{client_id} kickoff", "client_id": client_id}]  # already here
    refused = call(api, "POST", "/export/import", 403, json={"data": data})  # the 231e16b SDK's body
    assert "operator_approved" in refused["error"]
    imported = call(api, "POST", "/export/import", json={"data": data, "operator_approved": True})
    assert (imported["imported"], imported["skipped"], imported["errors"]) == (1, 1, 0)
    after = call(api, "GET", "/export", params={"client_id": client_id, "limit": 500})
    assert after["total"] == 3


def test_update_delete_and_restore(api: httpx.Client, client_id: str) -> None:
    old = sdk_store(api, type="fact", content=f"{client_id} invoices are due in 30 days", client_id=client_id,
                    key="terms")
    new = sdk_store(api, type="fact", content=f"{client_id} invoices are due in 45 days", client_id=client_id,
                    key="terms")
    assert new["supersedes"] == old["id"]

    updated = call(api, "PATCH", f"/memory/{new['id']}", json={"importance": "critical"})
    assert updated["updated_fields"] == ["importance"]
    restored = call(api, "POST", f"/memory/{old['id']}/restore")  # a superseded memory comes back
    assert restored["restored"] is True and call(api, "GET", f"/memory/{old['id']}")["active"] is True
    found(api, "invoices due days", old["id"], client_id=client_id)

    deleted = call(api, "DELETE", f"/memory/{new['id']}", json={"reason": "wrong terms"})
    assert deleted["deleted"] is True and call(api, "GET", f"/memory/{new['id']}")["active"] is False
    gone = eventually(lambda: sdk_search(api, "invoices due days", client_id=client_id),
                      lambda body: new["id"] not in [hit["id"] for hit in body["results"]])
    assert [hit["id"] for hit in gone["results"]] == [old["id"]]
    assert call(api, "DELETE", f"/memory/{new['id']}", json={"reason": "again"})["already_inactive"] is True
    assert "deleted" in call(api, "POST", f"/memory/{new['id']}/restore", 409)["error"]


def test_bad_input_is_a_4xx_with_an_error(api: httpx.Client) -> None:
    assert "type" in call(api, "POST", "/memory", 400, json={"content": "no type"})["error"]
    assert call(api, "GET", "/memory/not-an-id", 404)["error"]
    assert call(api, "GET", "/health")["status"] in ("ok", "healthy")
