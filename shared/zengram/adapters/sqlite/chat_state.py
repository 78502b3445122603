"""The embedded `AgentStateStore`: a `chat_state` table in the records file."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.chat.domain.state import AgentState
from zengram.kernel.timestamps import format_timestamp

SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_state (
    project_id TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    key TEXT NOT NULL,
    expires_at TEXT,
    body TEXT NOT NULL,
    PRIMARY KEY (project_id, subject_id, key)
);
"""
_LIVE = "(expires_at IS NULL OR expires_at > ?)"


def _state(row: sqlite3.Row) -> AgentState:
    return AgentState.model_validate_json(row["body"])


class SQLiteAgentStateStore:
    def __init__(self, path: Path) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    def put(self, state: AgentState) -> AgentState:
        key = (state.project_id, state.subject_id, state.key)
        with self._db.transaction() as tx:
            row = tx.execute("SELECT body FROM chat_state WHERE project_id = ? AND subject_id = ? AND key = ?",
                             key).fetchone()
            stored = state if row is None else state.model_copy(update={"created_at": _state(row).created_at})
            expires = format_timestamp(stored.expires_at) if stored.expires_at else None
            tx.execute("INSERT OR REPLACE INTO chat_state (project_id, subject_id, key, expires_at, body) "
                       "VALUES (?, ?, ?, ?, ?)", (*key, expires, stored.model_dump_json()))
        return stored

    def get(self, project_id: str, subject_id: str, key: str, now: datetime) -> AgentState | None:
        row = self._db.connection().execute(
            f"SELECT body FROM chat_state WHERE project_id = ? AND subject_id = ? AND key = ? AND {_LIVE}",
            (project_id, subject_id, key, format_timestamp(now))).fetchone()
        return _state(row) if row is not None else None

    def list_live(self, project_id: str, subject_id: str, now: datetime) -> list[AgentState]:
        rows = self._db.connection().execute(
            f"SELECT body FROM chat_state WHERE project_id = ? AND subject_id = ? AND {_LIVE} ORDER BY key",
            (project_id, subject_id, format_timestamp(now)))
        return [_state(row) for row in rows]

    def delete(self, project_id: str, subject_id: str, key: str, now: datetime) -> bool:
        with self._db.transaction() as tx:
            live = tx.execute(
                f"SELECT 1 FROM chat_state WHERE project_id = ? AND subject_id = ? AND key = ? AND {_LIVE}",
                (project_id, subject_id, key, format_timestamp(now))).fetchone()
            tx.execute("DELETE FROM chat_state WHERE project_id = ? AND subject_id = ? AND key = ?",
                       (project_id, subject_id, key))
        return live is not None
