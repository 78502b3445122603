"""The embedded `RecallEventStore`: `recall_events` and one `recall_memories` row per injected memory."""

from __future__ import annotations

from pathlib import Path

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.chat.domain.recalls import LearningOutcome, RecallEvent
from zengram.kernel.timestamps import format_timestamp

SCHEMA = """
CREATE TABLE IF NOT EXISTS recall_events (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS recall_events_by_chat ON recall_events (project_id, chat_id, created_at, id);
CREATE INDEX IF NOT EXISTS recall_events_by_time ON recall_events (project_id, created_at, id);
CREATE TABLE IF NOT EXISTS recall_memories (
    event_id TEXT NOT NULL,
    project_id TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (event_id, memory_id)
);
CREATE INDEX IF NOT EXISTS recall_memories_by_memory ON recall_memories (project_id, memory_id, created_at);
"""


class SQLiteRecallEventStore:
    def __init__(self, path: Path) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    def record(self, event: RecallEvent) -> None:
        moment = format_timestamp(event.created_at)
        with self._db.transaction() as tx:
            tx.execute("INSERT INTO recall_events (id, project_id, chat_id, created_at, body) VALUES (?, ?, ?, ?, ?)",
                       (event.id, event.project_id, event.chat_id, moment, event.model_dump_json()))
            tx.executemany("INSERT OR IGNORE INTO recall_memories (event_id, project_id, memory_id, created_at) "
                           "VALUES (?, ?, ?, ?)",
                           [(event.id, event.project_id, use.memory_id, moment) for use in event.memories])

    def get(self, event_id: str) -> RecallEvent | None:
        row = self._db.connection().execute("SELECT body FROM recall_events WHERE id = ?", (event_id,)).fetchone()
        return RecallEvent.model_validate_json(row[0]) if row is not None else None

    def for_chat(self, project_id: str, chat_id: str, limit: int) -> list[RecallEvent]:
        rows = self._db.connection().execute(
            "SELECT body FROM recall_events WHERE project_id = ? AND chat_id = ? ORDER BY created_at, id LIMIT ?",
            (project_id, chat_id, limit))
        return [RecallEvent.model_validate_json(row[0]) for row in rows]

    def latest(self, project_id: str, limit: int) -> list[RecallEvent]:
        rows = self._db.connection().execute(
            "SELECT body FROM recall_events WHERE project_id = ? ORDER BY created_at DESC, id DESC LIMIT ?",
            (project_id, limit))
        return [RecallEvent.model_validate_json(row[0]) for row in rows]

    def for_memory(self, project_id: str, memory_id: str, limit: int) -> list[RecallEvent]:
        rows = self._db.connection().execute(
            "SELECT e.body FROM recall_memories m JOIN recall_events e ON e.id = m.event_id "
            "WHERE m.project_id = ? AND m.memory_id = ? ORDER BY m.created_at DESC, m.event_id DESC LIMIT ?",
            (project_id, memory_id, limit))
        return [RecallEvent.model_validate_json(row[0]) for row in rows]

    def set_learning(self, event_id: str, outcome: LearningOutcome) -> None:
        with self._db.transaction() as tx:
            row = tx.execute("SELECT body FROM recall_events WHERE id = ?", (event_id,)).fetchone()
            if row is None:
                return
            event = RecallEvent.model_validate_json(row[0]).model_copy(update={"learning": outcome})
            tx.execute("UPDATE recall_events SET body = ? WHERE id = ?", (event.model_dump_json(), event_id))
