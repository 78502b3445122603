"""GET /memory/{id} (the full record) and GET /memory/query (structured lookups, no ranking)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.helpers import assert_error, query, store
from tests.support import TickingClock

MISSING_ID = "5f0c2a43-1d0e-4b8e-9a57-7c2d3e4f5a6b"


def ids(body: dict[str, Any]) -> list[str]:
    return [record["id"] for record in body["results"]]


# -- GET /memory/{id} ----------------------------------------------------------------------------------


def test_get_unknown_id_is_404(shared_client: TestClient) -> None:
    message = assert_error(shared_client.get(f"/memory/{MISSING_ID}"), 404)

    assert MISSING_ID in message


def test_get_returns_the_full_record(client: TestClient) -> None:
    created = store(client, "Acme's renewal is due on 1 October", type="fact", client_id="acme-corp",
                    key="acme-renewal", valid_from="2026-01-01T00:00:00Z")

    record = client.get(f"/memory/{created['id']}").json()

    expected_fields = {
        "id", "type", "content", "content_hash", "source_agent", "client_id", "category", "importance",
        "knowledge_category", "key", "subject", "status_value", "metadata", "valid_from", "valid_to", "created_at",
        "updated_at", "active", "supersedes", "superseded_by", "superseded_at", "deleted_at", "deleted_by",
        "delete_reason", "observed_by", "observation_count", "last_observed_at", "access_count", "last_accessed_at",
        "confidence",
    }
    assert expected_fields <= set(record)
    assert record["valid_from"] == "2026-01-01T00:00:00.000Z"
    assert record["confidence"] == 1.0


def test_get_still_returns_a_deleted_memory(client: TestClient) -> None:
    created = store(client, "Temporary note about the Acme demo")
    client.delete(f"/memory/{created['id']}")

    response = client.get(f"/memory/{created['id']}")

    assert response.status_code == 200
    assert response.json()["deleted_at"] is not None


# -- GET /memory/query ---------------------------------------------------------------------------------


def test_facts_by_key_return_only_the_current_version(client: TestClient) -> None:
    old = store(client, "Acme's stack is Rails", type="fact", client_id="acme-corp", key="acme-tech-stack")
    new = store(client, "Acme's stack is Next.js 14", type="fact", client_id="acme-corp", key="acme-tech-stack")
    store(client, "Acme's CDN is Cloudflare", type="fact", client_id="acme-corp", key="acme-cdn")

    body = query(client, type="facts", key="acme-tech-stack")

    assert body["type"] == "facts"
    assert ids(body) == [new["id"]]
    assert body["results"][0]["content"] == "Acme's stack is Next.js 14"
    assert ids(query(client, type="facts", key="acme-tech-stack", include_superseded="true")) == [new["id"], old["id"]]


def test_statuses_by_subject(client: TestClient) -> None:
    store(client, "Pipeline red", type="status", subject="deploy-pipeline", status_value="red")
    current = store(client, "Pipeline green", type="status", subject="deploy-pipeline", status_value="green")
    store(client, "Backups running", type="status", subject="backups", status_value="ok")

    body = query(client, type="statuses", subject="deploy-pipeline")

    assert ids(body) == [current["id"]]
    assert body["results"][0]["status_value"] == "green"


def test_events_since_a_timestamp(client: TestClient, clock: TickingClock) -> None:
    store(client, "Acme kickoff call held")
    clock.advance(days=5)
    recent = store(client, "Acme design review held")

    assert ids(query(client, type="events", since="2026-03-03T00:00:00Z")) == [recent["id"]]
    assert len(ids(query(client, type="events", since="2026-03-01T00:00:00Z"))) == 2
    assert ids(query(client, type="events", since="2026-04-01T00:00:00Z")) == []


def test_each_query_type_returns_only_that_type(client: TestClient) -> None:
    ids_by_type = {type_: store(client, f"Globex {type_} about the Q3 roadmap", type=type_)["id"]
                   for type_ in ("event", "fact", "decision", "status")}

    for qtype, mtype in (("events", "event"), ("facts", "fact"), ("decisions", "decision"), ("statuses", "status")):
        body = query(client, type=qtype)
        assert body["type"] == qtype
        assert ids(body) == [ids_by_type[mtype]], qtype


def test_query_filters_by_client_agent_and_category(client: TestClient) -> None:
    acme = store(client, "Acme weekly report sent", client_id="acme-corp", source_agent="n8n", category="procedural")
    store(client, "Globex weekly report sent", client_id="globex", source_agent="n8n", category="procedural")
    store(client, "Acme invoice paid", client_id="acme-corp", source_agent="claude-code")

    assert ids(query(client, type="events", client_id="acme-corp", source_agent="n8n")) == [acme["id"]]
    assert ids(query(client, type="events", client_id="acme-corp", category="procedural")) == [acme["id"]]
    assert len(ids(query(client, type="events", source_agent="n8n"))) == 2


def test_query_is_newest_first_and_pages(client: TestClient) -> None:
    created = [store(client, f"Sprint {n} retro notes for the Acme portal")["id"] for n in range(5)]

    assert ids(query(client, type="events")) == created[::-1]
    assert ids(query(client, type="events", limit=2)) == created[4:2:-1]
    assert ids(query(client, type="events", limit=2, offset=2)) == created[2:0:-1]
    assert ids(query(client, type="events", limit=500, offset=5)) == []


def test_query_never_returns_deleted_memories(client: TestClient) -> None:
    created = store(client, "Acme's stack is Rails", type="fact", key="acme-tech-stack")
    client.delete(f"/memory/{created['id']}")

    assert query(client, type="facts", key="acme-tech-stack")["count"] == 0
    assert query(client, type="facts", key="acme-tech-stack", include_superseded="true")["count"] == 0


def test_type_is_optional_and_singular_types_are_taken_as_upstream(client: TestClient) -> None:
    event = store(client, "Deployed v2.4 to production")
    fact = store(client, "Acme uses Next.js 14", type="fact", key="acme-tech-stack")

    untyped = query(client)
    assert untyped["type"] == "events" and [row["id"] for row in untyped["results"]] == [event["id"]]
    singular = query(client, type="fact")
    assert singular["type"] == "facts" and [row["id"] for row in singular["results"]] == [fact["id"]]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"type": "memories"}, "type"),
        ({"type": "events", "key": "acme-tech-stack"}, "key"),
        ({"type": "facts", "subject": "deploy-pipeline"}, "subject"),
        ({"type": "facts", "key": "k" * 129}, "key"),
        ({"type": "statuses", "subject": "s" * 257}, "subject"),
        ({"type": "events", "since": "last week"}, "since"),
        ({"type": "events", "limit": 0}, "limit"),
        ({"type": "events", "limit": 501}, "limit"),
        ({"type": "events", "offset": -1}, "offset"),
        ({"type": "events", "client_id": "acme corp"}, "client_id"),
        ({"type": "events", "source_agent": "bad agent"}, "source_agent"),
        ({"type": "events", "category": "misc"}, "category"),
    ],
)
def test_invalid_query_parameters_are_refused(shared_client: TestClient, params: dict[str, Any], field: str) -> None:
    assert_error(shared_client.get("/memory/query", params=params), 400, field)


@pytest.mark.parametrize("limit", [1, 500])
def test_query_limit_bounds_are_accepted(client: TestClient, limit: int) -> None:
    store(client, "Acme kickoff call held")
    store(client, "Acme design review held")

    assert query(client, type="events", limit=limit)["count"] == min(limit, 2)
