"""Sample data for the dashboard test: two clients, a fact superseded twice and corroborated, events and decisions
naming technologies (so the entity graph has edges), a client with memories but no fingerprint (initech), a
status, searches that count as accesses, and three small documents indexed in the document base (/kb). Written
through the public API over a clock the test moves, so the memories span three weeks up to now."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from tests.support import TickingClock

FIRST_DAY = timedelta(days=21)


@dataclass(frozen=True)
class Sample:
    fact_chain: list[str]  # the acme-db fact's versions, oldest first (the last is active)
    corroborated: str  # the active fact, observed by a second agent
    event_ids: list[str]
    read_key: str  # a scoped read key for acme-corp


def sample_clock() -> TickingClock:
    return TickingClock(datetime.now(UTC) - FIRST_DAY)


DOCUMENTS = {
    "runbooks/postgres.txt": "Failover of the Acme PostgreSQL primary: promote the replica, then repoint pgbouncer.",
    "runbooks/kafka.txt": "Kafka consumer lag alerts page the on-call engineer after ten minutes of growth.",
    "adr/0007-redis.txt": "Decision record: Redis holds the Acme session cache; Memcached is retired.",
}


def write_documents(folder: Path) -> Path:
    for name, text in DOCUMENTS.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text + "\n")
    return folder


def index_documents(api: httpx.Client, folder: Path) -> None:
    """POST /kb/index, then waits for the job (the deadline only bounds a hung run; nothing asserts on time)."""
    queued = api.post("/kb/index", json={"folder_path": str(folder)})
    assert queued.status_code == 202, queued.text
    deadline = time.monotonic() + 120
    while (job := api.get(f"/kb/index/jobs/{queued.json()['job_id']}").json())["status"] in ("pending", "running"):
        assert time.monotonic() < deadline, job
        time.sleep(0.1)
    assert job["status"] == "done", job


def seed(base_url: str, admin_key: str, clock: TickingClock, documents: Path) -> Sample:
    with httpx.Client(base_url=base_url, headers={"x-api-key": admin_key}, timeout=30) as api:
        def store(content: str, **fields: object) -> str:
            response = api.post("/memory", json={"type": "event", "content": content, "source_agent": "claude-code",
                                                 **fields})
            assert response.status_code in (200, 201), response.text
            memory_id: str = response.json()["id"]
            return memory_id

        for client_id, fingerprint in {
            "acme-corp": {"name": "Acme Corporation", "aliases": ["Acme"], "people": ["Jane Doe"],
                          "domains": ["acme.com"], "keywords": ["billing"]},
            "globex": {"name": "Globex", "aliases": ["Globex Corp"], "people": ["Hank Scorpio"]},
        }.items():
            assert api.put(f"/clients/{client_id}", json=fingerprint).is_success

        chain = [store("Acme's primary database is MySQL 5.7 on Amazon EC2", type="fact", key="acme-db",
                       client_id="acme-corp", importance="high")]
        events = [store("Deployed the Acme billing service with Kafka and PostgreSQL", client_id="acme-corp")]
        clock.advance(days=4)
        chain.append(store("Acme migrated its primary database to PostgreSQL 15 on Amazon RDS", type="fact",
                           key="acme-db", client_id="acme-corp", importance="high"))
        events.append(store("Globex onboarding call: they bill through Stripe and track leads in Salesforce",
                            client_id="globex"))
        store("Use Redis for the Acme session cache instead of Memcached", type="decision", client_id="acme-corp")
        store("Acme database migration: in progress", type="status", subject="acme-migration",
              status_value="in progress", client_id="acme-corp")
        clock.advance(days=6)
        active = "Acme's primary database is PostgreSQL 16 on Amazon RDS with pgvector"
        chain.append(store(active, type="fact", key="acme-db", client_id="acme-corp", importance="high"))
        corroborated = store(active, type="fact", key="acme-db", client_id="acme-corp", source_agent="review-bot")
        events.append(store("Jane Doe asked for a Grafana board of Kafka consumer lag on PostgreSQL",
                            client_id="acme-corp"))
        store("Acme database migration: done", type="status", subject="acme-migration", status_value="done",
              client_id="acme-corp")
        clock.advance(days=5)
        for query in ("Acme primary database", "Kafka consumer lag"):  # counted as accesses (reinforcement)
            assert api.get("/memory/search", params={"q": query}).is_success
        clock.advance(days=5)
        events.append(store("Globex asked to move Stripe webhooks to Kafka", client_id="globex"))
        events.append(store("Weekly review of Kafka and PostgreSQL costs with Jane Doe", client_id="acme-corp"))
        events.append(store("Initech renewed its support contract for a year", client_id="initech"))  # no fingerprint
        index_documents(api, documents)
        created = api.post("/admin/keys", json={"name": "acme reader", "role": "read", "clients": ["acme-corp"]})
        assert created.status_code == 201, created.text
        return Sample(chain, corroborated, events, created.json()["key"])
