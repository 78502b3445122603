"""The embedded `MemoryEventLog` and `AuditLog` (chat/ports.py): tables `chat_memory_events` and `chat_audit` in
the records file. An event's `seq` is taken inside the write transaction (`BEGIN IMMEDIATE`), so it is gap-free
per subject under concurrent writers."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.chat.domain.events import AuditEntry, MemoryEvent, NewMemoryEvent
from zengram.kernel.timestamps import format_timestamp, parse_timestamp

SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_memory_events (
    project_id TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (project_id, subject_id, seq)
);
CREATE INDEX IF NOT EXISTS chat_memory_events_created ON chat_memory_events (created_at);
CREATE TABLE IF NOT EXISTS chat_memory_event_counters (
    project_id TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    last_seq INTEGER NOT NULL,
    PRIMARY KEY (project_id, subject_id)
);
CREATE TABLE IF NOT EXISTS chat_audit (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    subject_id TEXT,
    session_id TEXT,
    created_at TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chat_audit_project ON chat_audit (project_id, id);
CREATE INDEX IF NOT EXISTS chat_audit_created ON chat_audit (created_at);
"""


def _event(row: sqlite3.Row) -> MemoryEvent:
    return MemoryEvent(project_id=row["project_id"], subject_id=row["subject_id"], seq=row["seq"], type=row["type"],
                       data=json.loads(row["data"]), created_at=parse_timestamp(row["created_at"]))


class SQLiteMemoryEventLog:
    def __init__(self, path: Path) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    def append(self, events: Sequence[NewMemoryEvent]) -> list[MemoryEvent]:
        numbered: list[MemoryEvent] = []
        with self._db.transaction() as tx:
            for event in events:
                subject = (event.project_id, event.subject_id)
                tx.execute("INSERT INTO chat_memory_event_counters (project_id, subject_id, last_seq) "
                           "VALUES (?, ?, 1) ON CONFLICT (project_id, subject_id) DO UPDATE SET last_seq = "
                           "last_seq + 1", subject)
                seq = tx.execute("SELECT last_seq FROM chat_memory_event_counters WHERE project_id = ? AND "
                                 "subject_id = ?", subject).fetchone()[0]
                tx.execute("INSERT INTO chat_memory_events (project_id, subject_id, seq, type, data, created_at) "
                           "VALUES (?, ?, ?, ?, ?, ?)",
                           (*subject, seq, event.type.value, json.dumps(event.data, ensure_ascii=False),
                            format_timestamp(event.created_at)))
                numbered.append(MemoryEvent(**event.model_dump(), seq=seq))
        return numbered

    def last(self, project_id: str, subject_id: str) -> int:
        row = self._db.connection().execute(
            "SELECT last_seq FROM chat_memory_event_counters WHERE project_id = ? AND subject_id = ?",
            (project_id, subject_id)).fetchone()
        return int(row[0]) if row is not None else 0

    def since(self, project_id: str, subject_id: str, after: int, limit: int) -> list[MemoryEvent]:
        rows = self._db.connection().execute(
            "SELECT * FROM chat_memory_events WHERE project_id = ? AND subject_id = ? AND seq > ? ORDER BY seq "
            "LIMIT ?", (project_id, subject_id, after, limit))
        return [_event(row) for row in rows]

    def prune(self, before: datetime) -> int:
        with self._db.transaction() as tx:
            return tx.execute("DELETE FROM chat_memory_events WHERE created_at < ?",
                              (format_timestamp(before),)).rowcount


class SQLiteAuditLog:
    def __init__(self, path: Path) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    def record(self, entry: AuditEntry) -> None:
        with self._db.transaction() as tx:
            tx.execute("INSERT INTO chat_audit (id, project_id, subject_id, session_id, created_at, body) "
                       "VALUES (?, ?, ?, ?, ?, ?)",
                       (entry.id, entry.project_id, entry.subject_id, entry.session_id,
                        format_timestamp(entry.created_at), entry.model_dump_json()))

    def recent(self, project_id: str, limit: int, *, before: str | None = None, subject_id: str | None = None,
               session_id: str | None = None) -> list[AuditEntry]:
        conditions, values = ["project_id = ?"], [project_id]
        if before is not None:
            conditions.append("id < ?")
            values.append(before)
        for column, value in (("subject_id", subject_id), ("session_id", session_id)):
            if value is not None:
                conditions.append(f"{column} = ?")
                values.append(value)
        rows = self._db.connection().execute(
            f"SELECT body FROM chat_audit WHERE {' AND '.join(conditions)} ORDER BY id DESC LIMIT ?",
            (*values, limit))
        return [AuditEntry.model_validate_json(row["body"]) for row in rows]

    def prune(self, before: datetime) -> int:
        with self._db.transaction() as tx:
            return tx.execute("DELETE FROM chat_audit WHERE created_at < ?", (format_timestamp(before),)).rowcount
