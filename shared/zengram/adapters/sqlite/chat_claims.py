"""The embedded `ClaimStore`: a `chat_claims` table in the records file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.chat.domain.claims import Claim
from zengram.kernel.errors import Conflict, StaleRevision
from zengram.kernel.timestamps import format_timestamp

SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_claims (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revision INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chat_claims_by_subject ON chat_claims (project_id, subject_id, created_at, id);
"""


def _claim(row: sqlite3.Row) -> Claim:
    return Claim.model_validate_json(row["body"])


class SQLiteClaimStore:
    def __init__(self, path: Path) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    def add(self, claim: Claim) -> Claim:
        try:
            with self._db.transaction() as tx:
                tx.execute("INSERT INTO chat_claims (id, project_id, subject_id, created_at, revision, body) "
                           "VALUES (?, ?, ?, ?, ?, ?)",
                           (claim.id, claim.project_id, claim.subject_id, format_timestamp(claim.created_at),
                            claim.revision, claim.model_dump_json()))
        except sqlite3.IntegrityError:
            raise Conflict(f"claim {claim.id} already exists") from None
        return claim

    def get(self, project_id: str, claim_id: str) -> Claim | None:
        row = self._db.connection().execute("SELECT body FROM chat_claims WHERE id = ? AND project_id = ?",
                                            (claim_id, project_id)).fetchone()
        return _claim(row) if row is not None else None

    def of_subject(self, project_id: str, subject_id: str) -> list[Claim]:
        rows = self._db.connection().execute(
            "SELECT body FROM chat_claims WHERE project_id = ? AND subject_id = ? ORDER BY created_at, id",
            (project_id, subject_id))
        return [_claim(row) for row in rows]

    def save(self, claim: Claim, expected_revision: int) -> Claim:
        with self._db.transaction() as tx:
            cursor = tx.execute("UPDATE chat_claims SET revision = ?, body = ? WHERE id = ? AND project_id = ? "
                                "AND revision = ?", (claim.revision, claim.model_dump_json(), claim.id,
                                                     claim.project_id, expected_revision))
        if cursor.rowcount != 1:
            raise StaleRevision(f"claim {claim.id} changed meanwhile (or does not exist); read it again")
        return claim
