"""The AWS `LearningJobStore` (chat_ports.py): one item per job (`LJOB#<id>`) with a `version` that every write
moves on (claims are conditional on it); listed per project through `by-client` (`LJOBS#<project>`); a pending
or running job sits in `pending-index` (`CHAT_LEARN`, sorted by when it becomes due) until it finishes."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from zengram.adapters.dynamodb.chat_items import BODY, ChatTable, WriteConflict, key, listed_by, part, position
from zengram.adapters.dynamodb.items import Item, number, string
from zengram.adapters.dynamodb.schema import PENDING_PK, PENDING_SK
from zengram.adapters.dynamodb.table import make_client
from zengram.adapters.dynamodb.writes import Expression
from zengram.chat.domain.learning import JobStatus, LearningJob
from zengram.kernel.timestamps import format_timestamp

DUE_MARK = "CHAT_LEARN"
VERSION = "version"


def job_key(job_id: str) -> Item:
    return key(f"LJOB#{job_id}", "JOB")


def _due_at(job: LearningJob) -> datetime | None:
    if job.status is JobStatus.PENDING:
        return job.not_before
    if job.status is JobStatus.RUNNING:
        return job.lease_until
    return None


def _job(item: Item) -> LearningJob:
    return LearningJob.model_validate_json(item[BODY]["S"])


class DynamoDBLearningJobStore:
    def __init__(self, table_name: str, *, region: str | None = None, client: Any | None = None) -> None:
        self._table = ChatTable(client or make_client(region=region), table_name)

    def put(self, job: LearningJob) -> None:
        self._write(job)

    def get(self, job_id: str) -> LearningJob | None:
        item = self._table.get(job_key(job_id))
        return _job(item) if item is not None else None

    def claim(self, job_id: str, at: datetime, lease_seconds: float) -> LearningJob | None:
        item = self._table.get(job_key(job_id))
        if item is None:
            return None
        job = _job(item)
        if not job.is_due(at):
            return None
        claimed = job.claimed(at, timedelta(seconds=lease_seconds))
        try:
            self._write(claimed, expected_version=int(item[VERSION]["N"]))
        except WriteConflict:  # another worker claimed (or changed) it first
            return None
        return claimed

    def due(self, at: datetime, limit: int) -> list[LearningJob]:
        keys = self._table.pending_keys(DUE_MARK, limit, until=f"{format_timestamp(at)}#~")
        jobs = [_job(item) for item in self._table.fresh(keys)]
        return [job for job in jobs if job.is_due(at)]

    def jobs(self, project_id: str, chat_id: str | None, status: JobStatus | None,
             limit: int) -> list[LearningJob]:
        found: list[LearningJob] = []
        for item in self._table.by_client(f"LJOBS#{part(project_id)}", newest_first=True):
            job = _job(item)
            if (chat_id is None or job.chat_id == chat_id) and (status is None or job.status is status):
                found.append(job)
                if len(found) == limit:
                    break
        fresh = {job.id: job for job in map(_job, self._table.get_many([job_key(job.id) for job in found]))}
        return [fresh.get(job.id, job) for job in found]

    def _write(self, job: LearningJob, expected_version: int | None = None) -> None:
        expression = Expression()
        listed = listed_by(f"LJOBS#{part(job.project_id)}", job.created_at, job.id)
        assignments = [expression.equals(BODY, string(job.model_dump_json())),
                       *(expression.equals(name, value) for name, value in listed.items())]
        due = _due_at(job)
        removals = []
        if due is not None:
            assignments += [expression.equals(PENDING_PK, string(DUE_MARK)),
                            expression.equals(PENDING_SK, string(position(due, job.id)))]
        else:
            removals = [expression.name(PENDING_PK), expression.name(PENDING_SK)]
        update = (f"SET {', '.join(assignments)} ADD {expression.name(VERSION)} {expression.value(number(1))}"
                  + (f" REMOVE {', '.join(removals)}" if removals else ""))
        condition = None if expected_version is None else expression.equals(VERSION, number(expected_version))
        self._table.update(job_key(job.id), expression, update, condition)
