"""The embedded `ChatHistoryStore`: `chats` (one summary per chat) and `chat_messages` in the records file."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.chat.domain.history import ChatSummary, NewMessage, Role, StoredMessage
from zengram.kernel.timestamps import format_timestamp, parse_timestamp

SCHEMA = """
CREATE TABLE IF NOT EXISTS chats (
    project_id TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_message_at TEXT NOT NULL,
    message_count INTEGER NOT NULL,
    next_index INTEGER NOT NULL,
    PRIMARY KEY (project_id, subject_id, chat_id)
);
CREATE INDEX IF NOT EXISTS chats_by_activity ON chats (project_id, subject_id, last_message_at);
CREATE TABLE IF NOT EXISTS chat_messages (
    project_id TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    name TEXT,
    tool_call_id TEXT,
    metadata TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (project_id, subject_id, chat_id, idx)
);
"""


def _message(row: sqlite3.Row) -> StoredMessage:
    return StoredMessage(project_id=row["project_id"], subject_id=row["subject_id"], chat_id=row["chat_id"],
                         index=row["idx"], role=Role(row["role"]), content=row["content"], name=row["name"],
                         tool_call_id=row["tool_call_id"], metadata=json.loads(row["metadata"]),
                         created_at=parse_timestamp(row["created_at"]))


def _summary(row: sqlite3.Row) -> ChatSummary:
    return ChatSummary(project_id=row["project_id"], subject_id=row["subject_id"], chat_id=row["chat_id"],
                       created_at=parse_timestamp(row["created_at"]),
                       last_message_at=parse_timestamp(row["last_message_at"]), message_count=row["message_count"])


class SQLiteChatHistoryStore:
    def __init__(self, path: Path) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    def append(self, project_id: str, subject_id: str, chat_id: str, messages: Sequence[NewMessage],
               at: datetime) -> list[StoredMessage]:
        key = (project_id, subject_id, chat_id)
        moment = format_timestamp(at)
        with self._db.transaction() as tx:
            row = tx.execute("SELECT next_index FROM chats WHERE project_id = ? AND subject_id = ? AND chat_id = ?",
                             key).fetchone()
            first = row["next_index"] if row is not None else 0
            tx.execute(
                "INSERT INTO chats (project_id, subject_id, chat_id, created_at, last_message_at, message_count, "
                "next_index) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, subject_id, chat_id) DO UPDATE SET "
                "last_message_at = excluded.last_message_at, message_count = message_count + ?, next_index = ?",
                (*key, moment, moment, len(messages), first + len(messages), len(messages), first + len(messages)))
            stored = [StoredMessage(project_id=project_id, subject_id=subject_id, chat_id=chat_id, index=first + i,
                                    created_at=at, **message.model_dump()) for i, message in enumerate(messages)]
            tx.executemany(
                "INSERT INTO chat_messages (project_id, subject_id, chat_id, idx, role, content, name, tool_call_id, "
                "metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(*key, m.index, m.role.value, m.content, m.name, m.tool_call_id, json.dumps(m.metadata), moment)
                 for m in stored])
        return stored

    def read(self, project_id: str, subject_id: str, chat_id: str, limit: int) -> list[StoredMessage]:
        rows = self._db.connection().execute(
            "SELECT * FROM chat_messages WHERE project_id = ? AND subject_id = ? AND chat_id = ? ORDER BY idx LIMIT ?",
            (project_id, subject_id, chat_id, limit))
        return [_message(row) for row in rows]

    def recent(self, project_id: str, subject_id: str, chat_id: str, limit: int) -> list[StoredMessage]:
        rows = self._db.connection().execute(
            "SELECT * FROM chat_messages WHERE project_id = ? AND subject_id = ? AND chat_id = ? "
            "ORDER BY idx DESC LIMIT ?", (project_id, subject_id, chat_id, limit)).fetchall()
        return [_message(row) for row in reversed(rows)]

    def chats(self, project_id: str, subject_id: str, limit: int, offset: int) -> list[ChatSummary]:
        rows = self._db.connection().execute(
            "SELECT * FROM chats WHERE project_id = ? AND subject_id = ? ORDER BY last_message_at DESC, chat_id "
            "LIMIT ? OFFSET ?", (project_id, subject_id, limit, offset))
        return [_summary(row) for row in rows]

    def delete_chat(self, project_id: str, subject_id: str, chat_id: str) -> bool:
        key = (project_id, subject_id, chat_id)
        with self._db.transaction() as tx:
            tx.execute("DELETE FROM chat_messages WHERE project_id = ? AND subject_id = ? AND chat_id = ?", key)
            deleted = tx.execute("DELETE FROM chats WHERE project_id = ? AND subject_id = ? AND chat_id = ?", key)
        return deleted.rowcount == 1
