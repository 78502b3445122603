"""The `JobStore` contract (see zengram.memory.ports.JobStore), for the SQLite and DynamoDB adapters."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest
from zengram.memory.domain.jobs import Job, JobStatus
from zengram.memory.ports import JobStore

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
LOCK = "consolidation"


def make_job(*, kind: str = "consolidation", **fields: object) -> Job:
    return Job.model_validate({"id": str(uuid.uuid4()), "kind": kind, "created_at": T0, **fields})


def test_a_job_reads_back_as_stored_and_can_be_replaced(job_store: JobStore) -> None:
    # Given a queued job
    job = make_job()
    job_store.put(job)
    assert job_store.get(job.id) == job
    # When it finishes with a result
    done = job.model_copy(update={
        "status": JobStatus.SUCCEEDED, "started_at": T0, "finished_at": T0 + timedelta(seconds=3),
        "result": {"batches": 2, "merged": 1, "clients": ["acme"]},
    })
    job_store.put(done)
    # Then the stored job is the finished one; unknown ids are None
    assert job_store.get(job.id) == done
    assert job_store.get("missing") is None


def test_last_finished_is_the_latest_finish_of_that_kind(job_store: JobStore) -> None:
    assert job_store.last_finished("consolidation") is None
    later = make_job(status=JobStatus.FAILED, finished_at=T0 + timedelta(hours=6), error="LLM provider unavailable")
    earlier = make_job(status=JobStatus.SUCCEEDED, finished_at=T0)
    other_kind = make_job(kind="research", status=JobStatus.SUCCEEDED, finished_at=T0 + timedelta(days=1))
    running = make_job(status=JobStatus.RUNNING, started_at=T0 + timedelta(days=2))
    for job in (later, earlier, other_kind, running):  # an older finish stored last does not win
        job_store.put(job)
    assert job_store.last_finished("consolidation") == later
    assert job_store.last_finished("research") == other_kind


def test_a_held_lock_refuses_other_owners_until_released(job_store: JobStore) -> None:
    assert job_store.read_lock(LOCK) is None
    assert job_store.acquire(LOCK, "run-1", 60, T0)
    assert not job_store.acquire(LOCK, "run-2", 60, T0 + timedelta(seconds=59))
    lock = job_store.read_lock(LOCK)
    assert lock is not None and lock.owner == "run-1" and lock.expires_at == T0 + timedelta(seconds=60)
    job_store.release(LOCK, "run-2")  # not the holder: nothing happens
    assert not job_store.acquire(LOCK, "run-2", 60, T0 + timedelta(seconds=1))
    job_store.release(LOCK, "run-1")
    assert job_store.read_lock(LOCK) is None
    assert job_store.acquire(LOCK, "run-2", 60, T0 + timedelta(seconds=2))


def test_the_owner_extends_its_lock(job_store: JobStore) -> None:
    assert job_store.acquire(LOCK, "run-1", 60, T0)
    assert job_store.acquire(LOCK, "run-1", 60, T0 + timedelta(seconds=50))
    assert not job_store.acquire(LOCK, "run-2", 60, T0 + timedelta(seconds=100))  # would have expired at 60
    lock = job_store.read_lock(LOCK)
    assert lock is not None and lock.expires_at == T0 + timedelta(seconds=110)


def test_an_expired_lock_no_longer_blocks_and_a_late_release_keeps_the_new_holder(job_store: JobStore) -> None:
    # Given a holder that crashed: its lock expired at T0 + 60 s
    assert job_store.acquire(LOCK, "crashed-run", 60, T0)
    # When another owner asks at expiry
    assert job_store.acquire(LOCK, "run-2", 60, T0 + timedelta(seconds=60))
    # Then it holds the lock, and the crashed run coming back to release cannot free it
    job_store.release(LOCK, "crashed-run")
    lock = job_store.read_lock(LOCK)
    assert lock is not None and lock.owner == "run-2"
    assert not job_store.acquire(LOCK, "crashed-run", 60, T0 + timedelta(seconds=61))


def test_locks_are_independent_by_name(job_store: JobStore) -> None:
    assert job_store.acquire(LOCK, "run-1", 60, T0)
    assert job_store.acquire("research", "run-2", 60, T0)


@pytest.mark.parametrize("expired_before", [False, True], ids=["free", "expired"])
def test_concurrent_acquires_have_exactly_one_winner(job_store: JobStore, expired_before: bool) -> None:
    if expired_before:
        assert job_store.acquire(LOCK, "crashed-run", 10, T0 - timedelta(minutes=5))
    owners = [f"run-{number}" for number in range(16)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        won = list(pool.map(lambda owner: job_store.acquire(LOCK, owner, 60, T0), owners))
    assert sum(won) == 1
    lock = job_store.read_lock(LOCK)
    assert lock is not None and lock.owner == owners[won.index(True)]


def test_concurrent_claims_of_a_queued_job_have_exactly_one_winner(job_store: JobStore) -> None:
    # Given a queued job delivered many times at once (Lambda async invocations are at-least-once)
    job = make_job()
    job_store.put(job)
    with ThreadPoolExecutor(max_workers=16) as pool:
        claims = list(pool.map(lambda n: job_store.claim(job.id, T0 + timedelta(seconds=n)), range(16)))
    # Then exactly one claim wins: the job is running, started when that claim asked
    won = [claim for claim in claims if claim is not None]
    assert len(won) == 1
    winner = claims.index(won[0])
    assert won[0] == job.model_copy(update={"status": JobStatus.RUNNING, "started_at": T0 + timedelta(seconds=winner)})
    assert job_store.get(job.id) == won[0]


def test_only_a_queued_job_can_be_claimed(job_store: JobStore) -> None:
    job = make_job()
    job_store.put(job)
    running = job_store.claim(job.id, T0)
    assert running is not None and running.status is JobStatus.RUNNING
    assert job_store.claim(job.id, T0 + timedelta(seconds=1)) is None  # already claimed: unchanged
    assert job_store.get(job.id) == running
    finished = make_job(status=JobStatus.SUCCEEDED, started_at=T0, finished_at=T0 + timedelta(seconds=5))
    job_store.put(finished)
    assert job_store.claim(finished.id, T0 + timedelta(seconds=6)) is None
    assert job_store.get(finished.id) == finished
    assert job_store.claim("missing", T0) is None and job_store.get("missing") is None


def test_the_adapter_is_a_job_store(job_store: JobStore) -> None:
    assert isinstance(job_store, JobStore)
