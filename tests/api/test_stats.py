"""GET /stats: the memory health dashboard over HTTP, on the embedded host."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.api.helpers import assert_error, search, store
from tests.support import TickingClock

EMPTY_BY_TYPE = {"event": 0, "fact": 0, "decision": 0, "status": 0}


def stats(client: TestClient) -> dict[str, Any]:
    response = client.get("/stats")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_stats_need_the_api_key(shared_client: TestClient) -> None:
    assert_error(shared_client.get("/stats", headers={"x-api-key": "wrong"}), 401)


def test_an_empty_store_reports_zeros_and_its_configuration(client: TestClient) -> None:
    body = stats(client)
    body.pop("entities", None)  # present only where an entity registry is wired
    assert body == {
        "total_memories": 0, "vectors_count": 0, "active": 0, "superseded": 0, "deleted": 0, "consolidated": 0,
        "by_type": EMPTY_BY_TYPE, "decayed_below_50pct": 0,
        "decay_config": {"factor": 0.98, "affected_types": ["fact", "status"]},
        "retrieval": {"multi_path": True, "keyword_search": True, "keyword_index_count": 0},
        "index_health": {"status": "ok", "pending_index": 0, "parked": 0, "parked_records": []},
    }


def test_counts_follow_supersede_delete_and_restore(client: TestClient) -> None:
    # Given two versions of a fact, a status, an event that gets deleted and a repeated decision
    first = store(client, "Acme hosts on Vercel", type="fact", key="acme-hosting", client_id="acme")
    store(client, "Acme moved hosting to AWS", type="fact", key="acme-hosting", client_id="acme")
    store(client, "Deploy pipeline is green", type="status", subject="pipeline", status_value="green")
    event = store(client, "Kickoff call with Acme happened")
    store(client, "We chose Postgres for billing", type="decision")
    store(client, "We chose Postgres for billing", type="decision", expect=200)  # deduplicated
    client.request("DELETE", f"/memory/{event['id']}", json={"reason": "wrong client"})

    # When the stats are read
    body = stats(client)

    # Then deleted memories are counted apart, superseded ones within the total
    assert (body["total_memories"], body["active"], body["superseded"], body["deleted"]) == (4, 3, 1, 1)
    assert body["by_type"] == {"event": 0, "fact": 2, "decision": 1, "status": 1}
    assert body["index_health"] == {"status": "ok", "pending_index": 0, "parked": 0,
                                    "parked_records": []}  # every write reached the index
    assert body["vectors_count"] == body["retrieval"]["keyword_index_count"] == 4  # the deleted one left it

    # And a restore swaps which version is active without changing the totals
    assert client.post(f"/memory/{first['id']}/restore").status_code == 200
    after = stats(client)
    assert (after["total_memories"], after["active"], after["superseded"], after["deleted"]) == (4, 3, 1, 1)


def test_decayed_facts_are_counted_until_a_search_touches_them(client: TestClient, clock: TickingClock) -> None:
    store(client, "Acme's billing database is PostgreSQL 16", type="fact", key="acme-db", client_id="acme")
    store(client, "Quarterly planning happened in Lisbon")  # an event: never decays
    assert stats(client)["decayed_below_50pct"] == 0

    clock.advance(days=35)  # 0.98^35 = 0.49
    assert stats(client)["decayed_below_50pct"] == 1

    hits = search(client, "which database does Acme billing use", client_id="acme", type="fact")["results"]
    assert hits, "the fact should be found"
    assert stats(client)["decayed_below_50pct"] == 0  # the search counted as an access: its clock restarted
