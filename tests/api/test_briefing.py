"""GET /briefing: what other agents stored since a moment, bucketed, ranked by importance then recency."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import Container
from zengram.memory.domain.models import Memory, RecordQuery
from zengram.memory.services import knowledge

from tests.api.helpers import assert_error, store
from tests.support import TickingClock

SINCE = "2026-03-01T00:00:00Z"  # before the TickingClock's start: the whole store is in the window


def brief(client: TestClient, **params: Any) -> dict[str, Any]:
    response = client.get("/briefing", params={"since": SINCE, **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def bucket_ids(body: dict[str, Any], bucket: str) -> list[str]:
    return [entry["id"] for entry in body[bucket]]


@pytest.mark.parametrize(("params", "field"), [
    ({}, "since"),
    ({"since": "yesterday"}, "since"),
    ({"since": "1711584000"}, "since"),
    ({"since": SINCE, "limit": "0"}, "limit"),
    ({"since": SINCE, "limit": "501"}, "limit"),
    ({"since": SINCE, "limit": "many"}, "limit"),
    ({"since": SINCE, "format": "index"}, "format"),
    ({"since": SINCE, "include": "mine"}, "include"),
    ({"since": SINCE, "agent": "claude code"}, "agent"),
    ({"since": SINCE, "client_id": "-bad"}, "client_id"),
])
def test_invalid_parameters_are_400_naming_the_field(
    shared_client: TestClient, params: dict[str, str], field: str
) -> None:
    assert_error(shared_client.get("/briefing", params=params), 400, field)


def test_briefing_needs_the_api_key(shared_client: TestClient) -> None:
    response = shared_client.get("/briefing", params={"since": SINCE}, headers={"x-api-key": ""})
    assert_error(response, 401)


def test_limit_500_is_accepted(shared_client: TestClient) -> None:
    assert shared_client.get("/briefing", params={"since": SINCE, "limit": "500"}).status_code == 200


def test_empty_window_has_empty_buckets_and_summary(client: TestClient) -> None:
    store(client, "Acme kickoff call happened")
    body = brief(client, since="2027-01-01T00:00:00Z")
    assert body["summary"] == {
        "total_entries": 0, "total_in_period": 0, "events": 0, "facts_updated": 0, "status_changes": 0,
        "decisions": 0, "agents_active": [], "clients_mentioned": [], "entities_mentioned": [],
        "returned": 0, "has_more": False, "by_type": {"event": 0, "fact": 0, "decision": 0, "status": 0},
    }
    assert body["events"] == body["facts_updated"] == body["status_changes"] == body["decisions"] == []
    assert body["since"] == "2027-01-01T00:00:00.000Z" and body["format"] == "compact"
    assert body["requesting_agent"] == "unknown" and body["generated_at"].endswith("Z")
    assert body["brain_stats"] == {"total_memories": 1, "vectors_count": 1}


def test_buckets_summary_and_agent_exclusion(client: TestClient, clock: TickingClock) -> None:
    store(client, "Old news from before the window", source_agent="n8n")
    clock.advance(days=2)
    since = clock.now().strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    event = store(client, "Acme signed the renewal", source_agent="n8n", client_id="acme-corp", importance="high")
    fact = store(client, "Acme uses Next.js 15", type="fact", key="stack", source_agent="cursor",
                 client_id="acme-corp")
    status = store(client, "Deploy pipeline is red", type="status", subject="deploy", status_value="red",
                   source_agent="codex", client_id="globex")
    decision = store(client, "We move Acme to Vercel", type="decision", source_agent="n8n", client_id="acme-corp")
    own = store(client, "I reviewed the Acme contract", source_agent="claude-code", client_id="acme-corp")

    body = brief(client, since=since, agent="claude-code")
    assert bucket_ids(body, "events") == [event["id"]]
    assert bucket_ids(body, "facts_updated") == [fact["id"]]
    assert bucket_ids(body, "status_changes") == [status["id"]]
    assert bucket_ids(body, "decisions") == [decision["id"]]
    assert body["agent"] == "claude-code"
    assert body["requesting_agent"] == "claude-code"
    assert body["summary"] == {
        "total_entries": 4, "total_in_period": 5, "events": 1, "facts_updated": 1, "status_changes": 1,
        "decisions": 1, "agents_active": ["codex", "cursor", "n8n"], "clients_mentioned": ["acme-corp", "globex"],
        "entities_mentioned": [  # each memory's own client and agent too (upstream's writer entities)
            {"name": "acme-corp", "type": "client", "count": 3}, {"name": "n8n", "type": "agent", "count": 2},
            {"name": "codex", "type": "agent", "count": 1}, {"name": "cursor", "type": "agent", "count": 1},
            {"name": "globex", "type": "client", "count": 1}, {"name": "Next.js", "type": "technology", "count": 1},
            {"name": "Vercel", "type": "service", "count": 1}],
        "returned": 4, "has_more": False, "by_type": {"event": 1, "fact": 1, "decision": 1, "status": 1},
    }
    everything = brief(client, since=since, agent="claude-code", include="all")
    assert set(bucket_ids(everything, "events")) == {event["id"], own["id"]}
    assert everything["summary"]["agents_active"] == ["claude-code", "codex", "cursor", "n8n"]
    no_agent = brief(client, since=since)
    assert no_agent["summary"]["total_entries"] == 5
    only_globex = brief(client, since=since, client_id="globex")
    assert only_globex["summary"]["total_entries"] == 1
    assert bucket_ids(only_globex, "status_changes") == [status["id"]]
    corroborated = store(client, "Acme signed the renewal", source_agent="zapier", client_id="acme-corp", expect=200)
    assert corroborated["corroborated"] is True  # a corroborating agent is active too (upstream: observed_by)
    assert "zapier" in brief(client, since=since, agent="claude-code")["summary"]["agents_active"]


def test_sorted_by_importance_then_recency(client: TestClient) -> None:
    medium_old = store(client, "Medium old event", source_agent="n8n")
    critical = store(client, "Critical event", source_agent="n8n", importance="critical")
    medium_new = store(client, "Medium new event", source_agent="n8n")
    high = store(client, "High event", source_agent="n8n", importance="high")
    body = brief(client)
    assert bucket_ids(body, "events") == [critical["id"], high["id"], medium_new["id"], medium_old["id"]]


def test_limit_keeps_the_most_important_and_reports_more(client: TestClient) -> None:
    low_priority = [store(client, f"Routine sync number {n}", source_agent="n8n")["id"] for n in range(3)]
    critical = store(client, "Production is down for Acme", source_agent="n8n", importance="critical")
    body = brief(client, limit=2)
    assert bucket_ids(body, "events") == [critical["id"], low_priority[-1]]
    assert body["summary"]["total_entries"] == 4
    assert body["summary"]["returned"] == 2 and body["summary"]["has_more"] is True


def test_formats(client: TestClient) -> None:
    long_text = "Acme quarterly review notes. " * 20
    long_event = store(client, long_text.strip(), source_agent="n8n", importance="high")
    low_event = store(client, "Coffee machine refilled", source_agent="n8n", importance="low")
    low_fact = store(client, "Acme office is in Lyon\nsecond line", type="fact", key="office", importance="low",
                     source_agent="n8n")

    compact = brief(client)
    assert bucket_ids(compact, "events") == [long_event["id"]]  # low-importance events are skipped
    assert bucket_ids(compact, "facts_updated") == [low_fact["id"]]  # ...other low-importance memories are not
    entry = compact["events"][0]
    assert len(entry["content"]) == 200 and entry["content"].endswith("…")
    assert set(entry) == {"id", "type", "content", "source_agent", "client_id", "importance", "created_at",
                          "truncated", "confidence"}
    assert entry["truncated"] is True and entry["confidence"] == 1.0
    assert compact["facts_updated"][0]["truncated"] is False
    assert compact["facts_updated"][0]["key"] == "office"
    assert compact["summary"]["by_type"]["event"] == 1

    full = brief(client, format="full")
    assert set(bucket_ids(full, "events")) == {long_event["id"], low_event["id"]}
    record = next(e for e in full["events"] if e["id"] == long_event["id"])
    assert record["content"] == long_text.strip() and record["content_hash"] and "observed_by" in record

    summary = brief(client, format="summary")
    assert summary["summary"]["total_entries"] == 3
    assert not {"events", "facts_updated", "status_changes", "decisions", "brain_stats"} & set(summary)
    headline = summary["top_facts"][0]
    assert headline == {"id": low_fact["id"], "headline": "Acme office is in Lyon", "source_agent": "n8n",
                        "client_id": "global", "importance": "low", "created_at": headline["created_at"]}
    assert len(next(e for e in summary["top_events"] if e["id"] == long_event["id"])["headline"]) == 120
    assert summary["top_statuses"] == summary["top_decisions"] == []


def test_superseded_and_deleted_memories_are_left_out(client: TestClient) -> None:
    old = store(client, "Acme uses Next.js 14", type="fact", key="stack", source_agent="n8n")
    new = store(client, "Acme uses Next.js 15", type="fact", key="stack", source_agent="n8n")
    gone = store(client, "Acme churned", source_agent="n8n")
    assert client.request("DELETE", f"/memory/{gone['id']}").status_code == 200
    body = brief(client)
    assert bucket_ids(body, "facts_updated") == [new["id"]]
    assert old["id"] not in bucket_ids(body, "facts_updated") and body["events"] == []


def test_a_window_larger_than_the_scan_reports_more_with_one_read(
    client: TestClient, container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a briefing that may rank at most 3 memories, and a store that records what it is asked
    monkeypatch.setattr(knowledge, "MAX_BRIEFING_SCAN", 3)
    reads: list[tuple[int, int]] = []
    real_query = container.records.query

    def recorded(query: RecordQuery) -> list[Memory]:
        reads.append((query.limit, query.offset))
        return real_query(query)

    def brief_reading(**params: Any) -> tuple[dict[str, Any], list[tuple[int, int]]]:
        reads.clear()
        body = brief(client, **params)
        return body, list(reads)

    monkeypatch.setattr(container.records, "query", recorded)
    ids = [store(client, f"Nightly job {n} finished", source_agent="n8n")["id"] for n in range(3)]

    # When the window holds exactly the scan, nothing more is reported; one memory more, and it is
    exact, exact_reads = brief_reading()
    assert exact["summary"]["total_entries"] == 3 and exact["summary"]["has_more"] is False
    newest = store(client, "Nightly job 3 finished", source_agent="n8n")["id"]
    over, over_reads = brief_reading()

    # Then the newest 3 are ranked, has_more says the window was cut, and each briefing read the store once
    assert over["summary"]["has_more"] is True and over["summary"]["returned"] == 3
    assert bucket_ids(over, "events") == [newest, ids[2], ids[1]]
    assert exact_reads == over_reads == [(4, 0)]
