"""The AWS `JobStore`: job, last-finished and lock items in the records table (see infra/README.md).

Items (none carries a GSI key, so memory listings and counts never see them):
- `JOB#<id>` / `JOB`: one job.
- `JOBLAST#<kind>` / `JOB`: a copy of the job of that kind that finished last (for `last_finished`).
- `LOCK#<name>` / `LOCK`: `owner` and `expires_at`; taken with one conditional put.
A job is claimed (queued → running) with one conditional update of its `JOB#<id>` item.
"""

from __future__ import annotations

import contextlib
import json
from datetime import datetime, timedelta
from typing import Any

from zengram.adapters.dynamodb.items import Item, string, timestamp
from zengram.adapters.dynamodb.schema import PK, SK
from zengram.adapters.dynamodb.table import DynamoTable, WriteConflict, make_client
from zengram.adapters.dynamodb.writes import Expression, WriteOp
from zengram.kernel.timestamps import parse_timestamp
from zengram.memory.domain.jobs import Job, JobStatus, JobTrigger, LockState

JOB_KIND = "JOB"
LOCK_KIND = "LOCK"
_JOB_TIMESTAMPS = ("created_at", "started_at", "finished_at")


def job_key(job_id: str) -> Item:
    return {PK: string(f"JOB#{job_id}"), SK: string(JOB_KIND)}


def last_finished_key(kind: str) -> Item:
    return {PK: string(f"JOBLAST#{kind}"), SK: string(JOB_KIND)}


def lock_key(name: str) -> Item:
    return {PK: string(f"LOCK#{name}"), SK: string(LOCK_KIND)}


def job_item(key: Item, job: Job) -> Item:
    item: Item = {
        **key, "kind": string(JOB_KIND), "id": string(job.id), "job_kind": string(job.kind),
        "status": string(job.status.value), "trigger": string(job.trigger.value),
        "result": string(json.dumps(job.result)),
    }
    for name in _JOB_TIMESTAMPS:
        moment = getattr(job, name)
        if moment is not None:
            item[name] = timestamp(moment)
    if job.error is not None:
        item["error"] = string(job.error)
    return item


def job_from_item(item: Item) -> Job:
    stamps = {name: parse_timestamp(item[name]["S"]) for name in _JOB_TIMESTAMPS if name in item}
    return Job(
        id=item["id"]["S"], kind=item["job_kind"]["S"], status=JobStatus(item["status"]["S"]),
        trigger=JobTrigger(item["trigger"]["S"]), result=json.loads(item["result"]["S"]),
        error=item["error"]["S"] if "error" in item else None, **stamps,
    )


class DynamoDBJobStore:
    """Jobs and locks in the single table. Reads are strongly consistent; the lock is one conditional put."""

    def __init__(self, table_name: str, *, region: str | None = None, endpoint_url: str | None = None,
                 client: Any | None = None) -> None:
        self._table = DynamoTable(client or make_client(region=region, endpoint_url=endpoint_url), table_name)

    def put(self, job: Job) -> None:
        put_job = WriteOp("Put", {"Item": job_item(job_key(job.id), job)})
        if job.finished_at is None:
            self._table.write([put_job])
            return
        try:  # the last-finished copy only moves forward in time
            self._table.write([put_job, self._newer_last_finished(job)])
        except WriteConflict:
            self._table.write([put_job])

    def get(self, job_id: str) -> Job | None:
        item = self._table.get(job_key(job_id))
        return job_from_item(item) if item is not None else None

    def last_finished(self, kind: str) -> Job | None:
        item = self._table.get(last_finished_key(kind))
        return job_from_item(item) if item is not None else None

    def acquire(self, name: str, owner: str, ttl_seconds: float, now: datetime) -> bool:
        expression = Expression()
        expires_at, owner_name = expression.name("expires_at"), expression.name("owner")
        owner_value = expression.value(string(owner))
        condition = (f"attribute_not_exists({expression.name(PK)}) OR {expires_at} <= "
                     f"{expression.value(timestamp(now))} OR {owner_name} = {owner_value}")
        item = {**lock_key(name), "kind": string(LOCK_KIND), "owner": string(owner),
                "expires_at": timestamp(now + timedelta(seconds=ttl_seconds))}
        try:
            self._table.write([WriteOp("Put", {"Item": item, **expression.params(ConditionExpression=condition)})])
        except WriteConflict:
            return False
        return True

    def release(self, name: str, owner: str) -> None:
        expression = Expression()
        condition = expression.equals("owner", string(owner))
        with contextlib.suppress(WriteConflict):  # expired and taken over: the new holder keeps it
            self._table.write([WriteOp("Delete", {"Key": lock_key(name),
                                                  **expression.params(ConditionExpression=condition)})])

    def claim(self, job_id: str, started_at: datetime) -> Job | None:
        """One conditional update: `status` moves from queued to running only if it is still queued."""
        expression = Expression()
        update = (f"SET {expression.equals('status', string(JobStatus.RUNNING.value))}, "
                  f"{expression.equals('started_at', timestamp(started_at))}")
        condition = expression.equals("status", string(JobStatus.QUEUED.value))
        op = WriteOp("Update", {"Key": job_key(job_id),
                                **expression.params(UpdateExpression=update, ConditionExpression=condition)})
        try:
            return job_from_item(self._table.update_returning(op))
        except WriteConflict:  # claimed already, finished, or unknown (no item: no status to match)
            return None

    def read_lock(self, name: str) -> LockState | None:
        item = self._table.get(lock_key(name))
        if item is None:
            return None
        return LockState(name=name, owner=item["owner"]["S"], expires_at=parse_timestamp(item["expires_at"]["S"]))

    @staticmethod
    def _newer_last_finished(job: Job) -> WriteOp:
        assert job.finished_at is not None
        expression = Expression()
        finished = expression.name("finished_at")
        condition = (f"attribute_not_exists({expression.name(PK)}) OR "
                     f"{finished} <= {expression.value(timestamp(job.finished_at))}")
        return WriteOp("Put", {"Item": job_item(last_finished_key(job.kind), job),
                               **expression.params(ConditionExpression=condition)})
