"""The embedded `JobStore`: job rows and named locks in the records database file."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.kernel.timestamps import format_timestamp, parse_timestamp
from zengram.memory.domain.jobs import Job, JobStatus, JobTrigger, LockState

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    triggered_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT,
    result TEXT NOT NULL,
    error TEXT
);
CREATE INDEX IF NOT EXISTS jobs_by_kind_finished ON jobs (kind, finished_at) WHERE finished_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS locks (
    name TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
"""


def _stamp(moment: datetime | None) -> str | None:
    return format_timestamp(moment) if moment is not None else None


def _job_from_row(row: sqlite3.Row) -> Job:
    return Job(
        id=row["id"], kind=row["kind"], status=JobStatus(row["status"]), trigger=JobTrigger(row["triggered_by"]),
        created_at=parse_timestamp(row["created_at"]),
        started_at=parse_timestamp(row["started_at"]) if row["started_at"] else None,
        finished_at=parse_timestamp(row["finished_at"]) if row["finished_at"] else None,
        result=json.loads(row["result"]), error=row["error"],
    )


class SQLiteJobStore:
    """Jobs and locks for the embedded host. `acquire` and `claim` decide inside one `BEGIN IMMEDIATE` transaction."""

    def __init__(self, path: Path) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    def put(self, job: Job) -> None:
        with self._db.transaction() as tx:
            tx.execute(
                "INSERT OR REPLACE INTO jobs (id, kind, status, triggered_by, created_at, started_at, finished_at, "
                "result, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (job.id, job.kind, job.status.value, job.trigger.value, format_timestamp(job.created_at),
                 _stamp(job.started_at), _stamp(job.finished_at), json.dumps(job.result), job.error),
            )

    def get(self, job_id: str) -> Job | None:
        row = self._db.connection().execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return _job_from_row(row) if row else None

    def last_finished(self, kind: str) -> Job | None:
        row = self._db.connection().execute(
            "SELECT * FROM jobs WHERE kind = ? AND finished_at IS NOT NULL ORDER BY finished_at DESC, id DESC "
            "LIMIT 1", (kind,),
        ).fetchone()
        return _job_from_row(row) if row else None

    def acquire(self, name: str, owner: str, ttl_seconds: float, now: datetime) -> bool:
        expires = format_timestamp(now + timedelta(seconds=ttl_seconds))
        with self._db.transaction() as tx:
            row = tx.execute("SELECT owner, expires_at FROM locks WHERE name = ?", (name,)).fetchone()
            if row is not None and row["owner"] != owner and row["expires_at"] > format_timestamp(now):
                return False
            tx.execute("INSERT OR REPLACE INTO locks (name, owner, expires_at) VALUES (?, ?, ?)",
                       (name, owner, expires))
            return True

    def release(self, name: str, owner: str) -> None:
        with self._db.transaction() as tx:
            tx.execute("DELETE FROM locks WHERE name = ? AND owner = ?", (name, owner))

    def claim(self, job_id: str, started_at: datetime) -> Job | None:
        with self._db.transaction() as tx:
            claimed = tx.execute("UPDATE jobs SET status = ?, started_at = ? WHERE id = ? AND status = ?",
                                 (JobStatus.RUNNING.value, format_timestamp(started_at), job_id,
                                  JobStatus.QUEUED.value)).rowcount
            row = tx.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone() if claimed else None
        return _job_from_row(row) if row is not None else None

    def read_lock(self, name: str) -> LockState | None:
        row = self._db.connection().execute("SELECT * FROM locks WHERE name = ?", (name,)).fetchone()
        if row is None:
            return None
        return LockState(name=row["name"], owner=row["owner"], expires_at=parse_timestamp(row["expires_at"]))
