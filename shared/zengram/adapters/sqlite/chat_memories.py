"""The embedded `SubjectMemoryStore`: a `chat_memories` table in the records database file (chat_ports.py).

The memory is kept as JSON; the columns are what queries and guards need. `seen_count` and `last_seen_at` are
columns of their own, written only by `record_recall`, so a recall counted while a memory is being edited is not
lost when the edit is saved.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.chat.domain.memories import MemoryStatus, MemoryWrite, SubjectMemory
from zengram.kernel.errors import Conflict, StaleRevision
from zengram.kernel.timestamps import format_timestamp, parse_timestamp

SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_memories (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    status TEXT NOT NULL,
    deleted INTEGER NOT NULL,
    text_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revision INTEGER NOT NULL,
    seen_count INTEGER NOT NULL DEFAULT 0,
    last_seen_at TEXT,
    index_pending INTEGER NOT NULL DEFAULT 1,
    pending_at TEXT,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chat_memories_by_subject ON chat_memories (project_id, subject_id, created_at, id);
CREATE INDEX IF NOT EXISTS chat_memories_pending ON chat_memories (pending_at) WHERE index_pending = 1;
CREATE UNIQUE INDEX IF NOT EXISTS chat_memories_one_active_text
    ON chat_memories (project_id, subject_id, text_hash) WHERE status = 'active' AND deleted = 0;
"""
_COLUMNS = "body, seen_count, last_seen_at"


def _from_row(row: sqlite3.Row) -> SubjectMemory:
    memory = SubjectMemory.model_validate_json(row["body"])
    last_seen = parse_timestamp(row["last_seen_at"]) if row["last_seen_at"] else None
    return memory.model_copy(update={"seen_count": row["seen_count"], "last_seen_at": last_seen})


class SQLiteSubjectMemoryStore:
    def __init__(self, path: Path) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    def create(self, memory: SubjectMemory, supersede: Sequence[SubjectMemory]) -> MemoryWrite:
        with self._db.transaction() as tx:
            duplicate = tx.execute(
                f"SELECT {_COLUMNS} FROM chat_memories WHERE project_id = ? AND subject_id = ? AND text_hash = ? "
                "AND status = 'active' AND deleted = 0", (memory.project_id, memory.subject_id, memory.text_hash),
            ).fetchone()
            if duplicate is not None:
                return MemoryWrite(None, duplicate=_from_row(duplicate))
            superseded = [old for old in supersede if self._replace(tx, old, old.revision - 1)]
            self._insert(tx, memory)
        return MemoryWrite(memory, superseded=superseded)

    def get(self, memory_id: str) -> SubjectMemory | None:
        row = self._db.connection().execute(f"SELECT {_COLUMNS} FROM chat_memories WHERE id = ?",
                                            (memory_id,)).fetchone()
        return _from_row(row) if row is not None else None

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, SubjectMemory]:
        found: dict[str, SubjectMemory] = {}
        ids = list(dict.fromkeys(memory_ids))
        for start in range(0, len(ids), 500):
            batch = ids[start:start + 500]
            rows = self._db.connection().execute(
                f"SELECT {_COLUMNS} FROM chat_memories WHERE id IN ({', '.join('?' for _ in batch)})", batch)
            found.update((memory.id, memory) for memory in map(_from_row, rows))
        return found

    def save(self, memory: SubjectMemory, expected_revision: int) -> SubjectMemory:
        try:
            with self._db.transaction() as tx:
                if not self._replace(tx, memory, expected_revision):
                    raise StaleRevision(f"memory {memory.id} changed meanwhile (or does not exist); read it again")
                row = tx.execute(f"SELECT {_COLUMNS} FROM chat_memories WHERE id = ?", (memory.id,)).fetchone()
        except sqlite3.IntegrityError:  # the unique index of active texts
            raise Conflict(f"memory {memory.id}: another active memory of this subject has the same text") from None
        return _from_row(row)

    def of_subject(self, project_id: str, subject_id: str, *, statuses: Sequence[str], include_deleted: bool,
                   limit: int, offset: int) -> list[SubjectMemory]:
        wanted = list(statuses) or ["-"]
        rows = self._db.connection().execute(
            f"SELECT {_COLUMNS} FROM chat_memories WHERE project_id = ? AND subject_id = ? "
            f"AND status IN ({', '.join('?' for _ in wanted)}) {'' if include_deleted else 'AND deleted = 0'} "
            "ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
            [project_id, subject_id, *wanted, limit, offset])
        return [_from_row(row) for row in rows]

    def active_of(self, project_id: str, subject_id: str, limit: int) -> list[SubjectMemory]:
        return self.of_subject(project_id, subject_id, statuses=[MemoryStatus.ACTIVE.value], include_deleted=False,
                               limit=limit, offset=0)

    def record_recall(self, memory_ids: Sequence[str], at: datetime) -> None:
        counts: dict[str, int] = {}
        for memory_id in memory_ids:
            counts[memory_id] = counts.get(memory_id, 0) + 1
        with self._db.transaction() as tx:
            tx.executemany("UPDATE chat_memories SET seen_count = seen_count + ?, last_seen_at = ? WHERE id = ?",
                           [(count, format_timestamp(at), memory_id) for memory_id, count in counts.items()])

    def pending_index(self, limit: int) -> list[SubjectMemory]:
        rows = self._db.connection().execute(
            f"SELECT {_COLUMNS} FROM chat_memories WHERE index_pending = 1 ORDER BY pending_at, id LIMIT ?", (limit,))
        return [_from_row(row) for row in rows]

    def mark_indexed(self, revisions: Mapping[str, int]) -> None:
        with self._db.transaction() as tx:
            tx.executemany("UPDATE chat_memories SET index_pending = 0, pending_at = NULL "
                           "WHERE id = ? AND revision = ?", list(revisions.items()))

    def iter_all(self) -> Iterator[SubjectMemory]:
        last = ""
        while True:
            rows = self._db.connection().execute(
                f"SELECT id, {_COLUMNS} FROM chat_memories WHERE id > ? ORDER BY id LIMIT 500", (last,)).fetchall()
            if not rows:
                return
            yield from (_from_row(row) for row in rows)
            last = rows[-1]["id"]

    # -- helpers -------------------------------------------------------------------------------------------------

    @staticmethod
    def _insert(tx: sqlite3.Connection, memory: SubjectMemory) -> None:
        tx.execute(
            "INSERT INTO chat_memories (id, project_id, subject_id, status, deleted, text_hash, created_at, revision, "
            "seen_count, last_seen_at, index_pending, pending_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
            (memory.id, memory.project_id, memory.subject_id, memory.status.value, int(memory.is_deleted),
             memory.text_hash, format_timestamp(memory.created_at), memory.revision, memory.seen_count,
             format_timestamp(memory.last_seen_at) if memory.last_seen_at else None,
             format_timestamp(memory.updated_at), memory.model_dump_json()))

    @staticmethod
    def _replace(tx: sqlite3.Connection, memory: SubjectMemory, expected_revision: int) -> bool:
        """Writes the new version if the stored one is at `expected_revision`; marks it pending for the index."""
        cursor = tx.execute(
            "UPDATE chat_memories SET status = ?, deleted = ?, text_hash = ?, revision = ?, index_pending = 1, "
            "pending_at = ?, body = ? WHERE id = ? AND revision = ?",
            (memory.status.value, int(memory.is_deleted), memory.text_hash, memory.revision,
             format_timestamp(memory.updated_at), memory.model_dump_json(), memory.id, expected_revision))
        return cursor.rowcount == 1
