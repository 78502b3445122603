"""The embedded `MemoryPolicyStore`: a `chat_memory_policies` table in the records file."""

from __future__ import annotations

from pathlib import Path

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.chat.domain.policies import MemoryPolicy
from zengram.kernel.timestamps import format_timestamp

SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_memory_policies (
    project_id TEXT NOT NULL,
    id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (project_id, id)
);
"""


class SQLiteMemoryPolicyStore:
    def __init__(self, path: Path) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    def put(self, policy: MemoryPolicy) -> MemoryPolicy:
        with self._db.transaction() as tx:
            tx.execute("INSERT OR REPLACE INTO chat_memory_policies (project_id, id, created_at, body) "
                       "VALUES (?, ?, ?, ?)", (policy.project_id, policy.id, format_timestamp(policy.created_at),
                                              policy.model_dump_json()))
        return policy

    def get(self, project_id: str, policy_id: str) -> MemoryPolicy | None:
        row = self._db.connection().execute("SELECT body FROM chat_memory_policies WHERE project_id = ? AND id = ?",
                                            (project_id, policy_id)).fetchone()
        return MemoryPolicy.model_validate_json(row["body"]) if row is not None else None

    def of_project(self, project_id: str) -> list[MemoryPolicy]:
        rows = self._db.connection().execute(
            "SELECT body FROM chat_memory_policies WHERE project_id = ? ORDER BY created_at, id", (project_id,))
        return [MemoryPolicy.model_validate_json(row["body"]) for row in rows]

    def delete(self, project_id: str, policy_id: str) -> bool:
        with self._db.transaction() as tx:
            cursor = tx.execute("DELETE FROM chat_memory_policies WHERE project_id = ? AND id = ?",
                                (project_id, policy_id))
        return cursor.rowcount == 1
