"""The embedded `LearningJobStore`: a `learning_jobs` table in the records file."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.chat.domain.learning import JobStatus, LearningJob
from zengram.kernel.timestamps import format_timestamp

SCHEMA = """
CREATE TABLE IF NOT EXISTS learning_jobs (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    status TEXT NOT NULL,
    due_at TEXT,
    created_at TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS learning_jobs_due ON learning_jobs (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS learning_jobs_by_project ON learning_jobs (project_id, created_at);
"""


def _due_at(job: LearningJob) -> str | None:
    """When the job becomes due: pending ones at `not_before`, running ones when their lease runs out."""
    if job.status is JobStatus.PENDING:
        return format_timestamp(job.not_before)
    if job.status is JobStatus.RUNNING and job.lease_until is not None:
        return format_timestamp(job.lease_until)
    return None


class SQLiteLearningJobStore:
    def __init__(self, path: Path) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    def put(self, job: LearningJob) -> None:
        with self._db.transaction() as tx:
            tx.execute("INSERT OR REPLACE INTO learning_jobs (id, project_id, chat_id, status, due_at, created_at, "
                       "body) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (job.id, job.project_id, job.chat_id, job.status.value, _due_at(job),
                        format_timestamp(job.created_at), job.model_dump_json()))

    def get(self, job_id: str) -> LearningJob | None:
        row = self._db.connection().execute("SELECT body FROM learning_jobs WHERE id = ?", (job_id,)).fetchone()
        return LearningJob.model_validate_json(row[0]) if row is not None else None

    def claim(self, job_id: str, at: datetime, lease_seconds: float) -> LearningJob | None:
        with self._db.transaction() as tx:
            row = tx.execute("SELECT body FROM learning_jobs WHERE id = ?", (job_id,)).fetchone()
            if row is None:
                return None
            job = LearningJob.model_validate_json(row[0])
            if not job.is_due(at):
                return None
            claimed = job.claimed(at, timedelta(seconds=lease_seconds))
            tx.execute("UPDATE learning_jobs SET status = ?, due_at = ?, body = ? WHERE id = ?",
                       (claimed.status.value, _due_at(claimed), claimed.model_dump_json(), job_id))
        return claimed

    def due(self, at: datetime, limit: int) -> list[LearningJob]:
        rows = self._db.connection().execute(
            "SELECT body FROM learning_jobs WHERE due_at IS NOT NULL AND due_at <= ? ORDER BY due_at, id LIMIT ?",
            (format_timestamp(at), limit))
        return [LearningJob.model_validate_json(row[0]) for row in rows]

    def jobs(self, project_id: str, chat_id: str | None, status: JobStatus | None,
             limit: int) -> list[LearningJob]:
        clauses, params = ["project_id = ?"], [project_id]
        if chat_id is not None:
            clauses.append("chat_id = ?")
            params.append(chat_id)
        if status is not None:
            clauses.append("status = ?")
            params.append(status.value)
        rows = self._db.connection().execute(
            f"SELECT body FROM learning_jobs WHERE {' AND '.join(clauses)} ORDER BY created_at DESC, id DESC LIMIT ?",
            [*params, limit])
        return [LearningJob.model_validate_json(row[0]) for row in rows]
