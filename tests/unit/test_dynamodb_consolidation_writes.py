"""What the contract cannot stage on DynamoDB: an access landing between expiry's listing and its write, and
consolidation items (jobs, locks) staying out of memory listings and counts."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

pytest.importorskip("boto3")
pytest.importorskip("moto")

from zengram.adapters.dynamodb import DynamoDBRecordStore
from zengram.adapters.dynamodb.jobs import DynamoDBJobStore
from zengram.kernel.content import content_hash
from zengram.memory.domain.jobs import Job, JobStatus
from zengram.memory.domain.models import Importance, Memory, MemoryType, RecordQuery

from tests.aws_support import fresh_dynamodb_store

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
LATER = T0 + timedelta(days=40)


def event(content: str) -> Memory:
    return Memory(id=str(uuid.uuid4()), type=MemoryType.EVENT, content=content, content_hash=content_hash(content),
                  source_agent="claude-code", client_id="acme", importance=Importance.LOW, created_at=T0,
                  updated_at=T0, observed_by=["claude-code"])


@pytest.fixture
def store() -> Iterator[DynamoDBRecordStore]:
    with fresh_dynamodb_store() as fresh:
        yield fresh


def test_an_access_after_the_listing_keeps_the_event(store: DynamoDBRecordStore,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # Given an event listed for expiry, then read by a search before the expiry writes
    memory = event("Standup happened")
    store.create_or_corroborate(memory, max_observers=20)
    listing = store._expiry_candidates(LATER, {Importance.LOW}, 10)
    assert [m.id for m in listing] == [memory.id]
    store.record_access([memory.id], T0 + timedelta(days=1))
    monkeypatch.setattr(store, "_expiry_candidates", lambda *_: listing)
    # ...and even the expiry's own re-read is stale once (the access lands between that read and the write)
    real_get_many, stale_reads = store.get_many, [{memory.id: listing[0]}]
    monkeypatch.setattr(store, "get_many", lambda ids: stale_reads.pop() if stale_reads else real_get_many(ids))

    # When expiry writes
    expired = store.expire_events(LATER, [Importance.LOW], "consolidation", "expired", LATER, 10)

    # Then the conditional write refused, and the fresh re-read kept the accessed event
    assert expired == [] and not stale_reads
    kept = store.get(memory.id)
    assert kept is not None and kept.active and kept.access_count == 1


def test_an_access_racing_one_event_of_a_chunk_keeps_it_and_expires_the_rest(
    store: DynamoDBRecordStore, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given three events listed for expiry (one transaction), the second read by a search before the write
    memories = [event(f"Standup {n} happened") for n in range(3)]
    for memory in memories:
        store.create_or_corroborate(memory, max_observers=20)
    listing = store._expiry_candidates(LATER, {Importance.LOW}, 10)
    monkeypatch.setattr(store, "_expiry_candidates", lambda *_: listing)
    real_get_many, stale_reads = store.get_many, [{m.id: m for m in listing}]
    monkeypatch.setattr(store, "get_many", lambda ids: stale_reads.pop() if stale_reads else real_get_many(ids))
    store.record_access([memories[1].id], T0 + timedelta(days=1))

    # When expiry writes
    expired = store.expire_events(LATER, [Importance.LOW], "consolidation", "expired", LATER, 10)

    # Then the stale chunk was refused whole, and its retry expired the two unaccessed events only
    assert sorted(m.id for m in expired) == sorted([memories[0].id, memories[2].id])
    assert [store.get(m.id).active for m in memories] == [False, True, False]  # type: ignore[union-attr]


def test_job_and_lock_items_stay_out_of_memory_reads(store: DynamoDBRecordStore) -> None:
    jobs = DynamoDBJobStore(store.table_name, client=store.client)
    jobs.put(Job(id="job-1", kind="consolidation", status=JobStatus.SUCCEEDED, created_at=T0, finished_at=T0))
    assert jobs.acquire("consolidation", "job-2", 60, T0)
    store.create_or_corroborate(event("Standup happened"), max_observers=20)
    assert store.count() == 1
    assert len(list(store.iter_all(include_deleted=True))) == 1
    assert len(store.query(RecordQuery(include_inactive=True, include_deleted=True))) == 1
    assert store.stats(LATER, 0.98).total == 1
