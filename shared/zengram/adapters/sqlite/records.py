"""The embedded `RecordStore`: one SQLite table, partial unique indexes backing dedup and supersede."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.domain.context import Neighbours
from zengram.domain.errors import Conflict, NotFound, StaleRevision
from zengram.domain.models import (
    Importance,
    ImportKind,
    ImportOutcome,
    Memory,
    MemoryChanges,
    MemoryType,
    RecordQuery,
    WriteKind,
    WriteOutcome,
    format_timestamp,
    parse_timestamp,
)
from zengram.domain.outbox import MAX_ERROR_CHARS, IndexAttempts, ParkedRecord
from zengram.domain.stats import DELETED, RecordStats, decayed_before, stats_from_counters, tally_of

SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    source_agent TEXT NOT NULL,
    client_id TEXT NOT NULL,
    category TEXT NOT NULL,
    importance TEXT NOT NULL,
    knowledge_category TEXT,
    key TEXT,
    subject TEXT,
    status_value TEXT,
    metadata TEXT NOT NULL,
    valid_from TEXT,
    valid_to TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    active INTEGER NOT NULL,
    supersedes TEXT,
    superseded_by TEXT,
    superseded_at TEXT,
    deleted_at TEXT,
    deleted_by TEXT,
    delete_reason TEXT,
    observed_by TEXT NOT NULL,
    observation_count INTEGER NOT NULL,
    last_observed_at TEXT,
    access_count INTEGER NOT NULL,
    last_accessed_at TEXT,
    confidence REAL NOT NULL,
    consolidated INTEGER NOT NULL,
    revision INTEGER NOT NULL,
    index_pending INTEGER NOT NULL,
    entities TEXT NOT NULL DEFAULT '[]',
    index_attempts INTEGER NOT NULL DEFAULT 0,
    index_error TEXT,
    index_queued_at TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS memories_active_hash
    ON memories (client_id, type, content_hash) WHERE active = 1;
CREATE UNIQUE INDEX IF NOT EXISTS memories_active_fact_key
    ON memories (client_id, key) WHERE active = 1 AND type = 'fact' AND key IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS memories_active_status_subject
    ON memories (client_id, subject) WHERE active = 1 AND type = 'status' AND subject IS NOT NULL;
CREATE INDEX IF NOT EXISTS memories_by_created ON memories (created_at, id);
CREATE INDEX IF NOT EXISTS memories_by_client_created ON memories (client_id, created_at);
CREATE INDEX IF NOT EXISTS memories_by_key ON memories (client_id, key) WHERE key IS NOT NULL;
CREATE INDEX IF NOT EXISTS memories_by_subject ON memories (client_id, subject) WHERE subject IS NOT NULL;
CREATE INDEX IF NOT EXISTS memories_pending ON memories (index_pending) WHERE index_pending = 1;
-- A conversation thread's live events in stored order: a memory's nearest turns in one short range read.
CREATE INDEX IF NOT EXISTS memories_thread ON memories (client_id, source_agent, created_at, id)
    WHERE type = 'event' AND active = 1 AND deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS memories_unconsolidated ON memories (created_at, id)
    WHERE active = 1 AND consolidated = 0;
-- Covering indexes for /stats: the counts read only these (the trailing columns spare the table lookups).
CREATE INDEX IF NOT EXISTS memories_live_by_state ON memories (type, active, consolidated, deleted_at)
    WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS memories_deleted ON memories (deleted_at) WHERE deleted_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS memories_decaying
    ON memories (confidence, COALESCE(last_accessed_at, created_at), active, type, last_accessed_at, created_at)
    WHERE active = 1 AND type IN ('fact', 'status');
"""

_TIMESTAMP_FIELDS = ("valid_from", "valid_to", "created_at", "updated_at", "superseded_at", "deleted_at",
                     "last_observed_at", "last_accessed_at")
_JSON_FIELDS = ("metadata", "observed_by", "entities")
_BOOL_FIELDS = ("active", "consolidated")
# The index outbox: index_pending is INDEXED, PENDING or PARKED; a pending row is queued at index_queued_at.
INDEXED, PENDING, PARKED = 0, 1, 2
_OUTBOX_COLUMNS = ("index_pending", "index_attempts", "index_error", "index_queued_at")
_COLUMNS = [*Memory.model_fields, *_OUTBOX_COLUMNS]
_INSERT = f"INSERT INTO memories ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' for _ in _COLUMNS)})"
_LIVE_COUNTS = ("SELECT type, active, consolidated, COUNT(*) FROM memories WHERE deleted_at IS NULL "
                "GROUP BY type, active, consolidated")
_DELETED_COUNT = "SELECT COUNT(*) FROM memories WHERE deleted_at IS NOT NULL"
_DECAYING = "active = 1 AND type IN ('fact', 'status')"  # the WHERE of the memories_decaying index, verbatim
_DECAY_CONFIDENCES = f"SELECT DISTINCT confidence FROM memories INDEXED BY memories_decaying WHERE {_DECAYING}"
_THREAD_SIDE = ("SELECT * FROM memories INDEXED BY memories_thread WHERE client_id = ? AND source_agent = ? "
                "AND type = 'event' AND active = 1 AND deleted_at IS NULL AND (created_at, id) {} (?, ?) "
                "ORDER BY created_at {}, id {} LIMIT ?")
_THREAD_BEFORE, _THREAD_AFTER = _THREAD_SIDE.format("<", "DESC", "DESC"), _THREAD_SIDE.format(">", "ASC", "ASC")
_DECAYED_COUNT = (f"SELECT COUNT(*) FROM memories WHERE {_DECAYING} "
                  "AND confidence = ? AND COALESCE(last_accessed_at, created_at) < ?")


def _to_row(memory: Memory) -> list[Any]:
    values = memory.model_dump()
    for name in _TIMESTAMP_FIELDS:
        values[name] = format_timestamp(values[name]) if values[name] is not None else None
    for name in _JSON_FIELDS:
        values[name] = json.dumps(values[name], ensure_ascii=False)
    for name in _BOOL_FIELDS:
        values[name] = int(values[name])
    # Written afresh: pending at this revision, queued now, no failed attempts.
    values.update(index_pending=PENDING, index_attempts=0, index_error=None, index_queued_at=values["updated_at"])
    return [values[name] for name in _COLUMNS]


def _from_row(row: sqlite3.Row) -> Memory:
    values = {name: row[name] for name in Memory.model_fields}
    for name in _TIMESTAMP_FIELDS:
        values[name] = parse_timestamp(values[name]) if values[name] is not None else None
    for name in _JSON_FIELDS:
        values[name] = json.loads(values[name])
    for name in _BOOL_FIELDS:
        values[name] = bool(values[name])
    return Memory.model_validate(values)


class SQLiteRecordStore:
    """Source of truth for the embedded host. Every write runs in one `BEGIN IMMEDIATE` transaction."""

    def __init__(self, path: Path) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)
        _upgrade(self._db)

    def close(self) -> None:
        self._db.close()

    # -- writes ---------------------------------------------------------------------------------------

    def create_or_corroborate(self, memory: Memory, *, max_observers: int) -> WriteOutcome:
        with self._db.transaction() as tx:
            existing = self._active_duplicate(tx, memory.client_id, memory.type.value, memory.content_hash)
            if existing is not None:
                return self._observe(tx, existing, memory, max_observers)
            superseded = self._supersede_holder(tx, memory, at=memory.created_at)
            if superseded is not None:
                memory = memory.model_copy(update={"supersedes": superseded.id})
            tx.execute(_INSERT, _to_row(memory))
            return WriteOutcome(kind=WriteKind.CREATED, memory=memory, superseded=superseded)

    def import_memory(self, memory: Memory) -> ImportOutcome:
        with self._db.transaction() as tx:
            if tx.execute("SELECT 1 FROM memories WHERE id = ?", (memory.id,)).fetchone() is not None:
                return ImportOutcome(kind=ImportKind.DUPLICATE_ID, existing_id=memory.id)
            if memory.active:
                duplicate = self._active_duplicate(tx, memory.client_id, memory.type.value, memory.content_hash)
                if duplicate is not None:
                    return ImportOutcome(kind=ImportKind.DUPLICATE_CONTENT, existing_id=duplicate.id)
                holder = self._label_holder(tx, memory)
                if holder is not None:
                    return ImportOutcome(kind=ImportKind.LABEL_HELD, existing_id=holder.id)
            tx.execute(_INSERT, _to_row(memory))
            return ImportOutcome(kind=ImportKind.IMPORTED)

    def update(self, memory_id: str, changes: MemoryChanges, at: datetime, *,
               expected_revision: int | None = None) -> Memory:
        with self._db.transaction() as tx:
            current = self._require(tx, memory_id)
            if current.is_deleted:
                raise Conflict(f"memory {memory_id} is deleted; restore is not possible, store a new one")
            if expected_revision is not None and current.revision != expected_revision:
                raise StaleRevision(f"memory {memory_id} changed meanwhile (revision {current.revision}, "
                                    f"expected {expected_revision})")
            if changes.content_hash and changes.content_hash != current.content_hash and current.active:
                duplicate = self._active_duplicate(tx, current.client_id, current.type.value, changes.content_hash)
                if duplicate is not None:
                    raise Conflict(f"content: duplicates active memory {duplicate.id}")
            updates = changes.updates()
            updated = current.model_copy(update={**updates, "updated_at": at, "revision": current.revision + 1})
            self._write(tx, updated)
            return updated

    def soft_delete(self, memory_id: str, by: str, reason: str | None, at: datetime) -> Memory:
        with self._db.transaction() as tx:
            current = self._require(tx, memory_id)
            if current.is_deleted:
                return current
            deleted = current.model_copy(update={
                "active": False, "deleted_at": at, "deleted_by": by, "delete_reason": reason,
                "updated_at": at, "revision": current.revision + 1,
            })
            self._write(tx, deleted)
            return deleted

    def restore(self, memory_id: str, at: datetime) -> list[Memory]:
        with self._db.transaction() as tx:
            current = self._require(tx, memory_id)
            if current.is_deleted:
                raise Conflict(f"memory {memory_id} is deleted and cannot be restored")
            if current.active:
                return [current]
            duplicate = self._active_duplicate(tx, current.client_id, current.type.value, current.content_hash)
            if duplicate is not None:
                raise Conflict(f"memory {duplicate.id} with the same content is active")
            displaced = self._supersede_holder(tx, current, at=at)
            restored = current.model_copy(update={
                "active": True, "superseded_by": None, "superseded_at": None, "valid_to": None,
                "updated_at": at, "revision": current.revision + 1,
            })
            self._write(tx, restored)
            return [restored] + ([displaced] if displaced else [])

    def record_access(self, memory_ids: Sequence[str], at: datetime) -> None:
        if not memory_ids:
            return
        stamp = format_timestamp(at)
        counts = Counter(memory_ids)
        with self._db.transaction() as tx:
            tx.executemany(
                "UPDATE memories SET access_count = access_count + ?, "
                "last_accessed_at = MAX(COALESCE(last_accessed_at, ''), ?) WHERE id = ?",
                [(count, stamp, memory_id) for memory_id, count in counts.items()],
            )

    # -- the index outbox -------------------------------------------------------------------------------

    def mark_indexed(self, revisions: dict[str, int]) -> None:
        if not revisions:
            return
        with self._db.transaction() as tx:
            tx.executemany(
                f"UPDATE memories SET index_pending = {INDEXED}, index_attempts = 0, index_error = NULL "
                f"WHERE id = ? AND revision = ? AND index_pending != {INDEXED}",
                list(revisions.items()),
            )

    def record_index_failure(self, memory_id: str, revision: int, error: str, at: datetime,
                             park_after: int | None) -> IndexAttempts | None:
        with self._db.transaction() as tx:
            row = tx.execute(f"SELECT index_attempts FROM memories WHERE id = ? AND revision = ? "
                             f"AND index_pending != {PARKED}", (memory_id, revision)).fetchone()
            if row is None:
                return None
            attempts = IndexAttempts(attempts=row[0] + 1,
                                     parked=park_after is not None and row[0] + 1 >= park_after)
            tx.execute("UPDATE memories SET index_attempts = ?, index_error = ?, index_queued_at = ?, "
                       "index_pending = ? WHERE id = ?",
                       (attempts.attempts, error[:MAX_ERROR_CHARS], format_timestamp(at),
                        PARKED if attempts.parked else PENDING, memory_id))
            return attempts

    def parked_index(self, limit: int) -> list[ParkedRecord]:
        rows = self._db.connection().execute(
            "SELECT id, revision, index_attempts, index_error, index_queued_at FROM memories "
            f"INDEXED BY memories_index_parked WHERE index_pending = {PARKED} ORDER BY index_queued_at, id LIMIT ?",
            (limit,),
        ).fetchall()
        return [ParkedRecord(memory_id=row["id"], revision=row["revision"], attempts=row["index_attempts"],
                             last_error=row["index_error"] or "", parked_at=parse_timestamp(row["index_queued_at"]))
                for row in rows]

    def requeue_parked(self, at: datetime) -> int:
        with self._db.transaction() as tx:
            cursor = tx.execute(
                f"UPDATE memories SET index_pending = {PENDING}, index_attempts = 0, index_error = NULL, "
                f"index_queued_at = ? WHERE index_pending = {PARKED}", (format_timestamp(at),))
            return cursor.rowcount

    # -- consolidation's writes (each call one transaction) ---------------------------------------------

    def unconsolidated(self, limit: int) -> list[Memory]:
        rows = self._db.connection().execute(
            "SELECT * FROM memories INDEXED BY memories_unconsolidated WHERE active = 1 AND consolidated = 0 "
            "ORDER BY created_at, id LIMIT ?", (limit,),
        ).fetchall()
        return [_from_row(row) for row in rows]

    def mark_consolidated(self, memory_ids: Sequence[str], at: datetime) -> list[Memory]:
        with self._db.transaction() as tx:
            found = [self._find(tx, memory_id) for memory_id in dict.fromkeys(memory_ids)]
            return [self._revise(tx, m, at, consolidated=True)
                    for m in found if m is not None and not m.is_deleted and not m.consolidated]

    def supersede_by(self, memory_ids: Sequence[str], superseded_by: str, at: datetime) -> list[Memory]:
        changed: list[Memory] = []
        with self._db.transaction() as tx:
            for memory_id in dict.fromkeys(memory_ids):
                current = self._find(tx, memory_id)
                if current is None or current.is_deleted or memory_id == superseded_by:
                    continue
                if current.active:
                    changed.append(self._revise(tx, current, at, active=False, superseded_by=superseded_by,
                                                superseded_at=at, valid_to=at, consolidated=True))
                elif not current.consolidated:
                    changed.append(self._revise(tx, current, at, consolidated=True))
        return changed

    def expire_events(self, created_before: datetime, importances: Sequence[Importance], by: str, reason: str,
                      at: datetime, limit: int) -> list[Memory]:
        levels = [Importance(level).value for level in importances]
        if not levels or limit <= 0:
            return []
        with self._db.transaction() as tx:
            rows = tx.execute(
                "SELECT * FROM memories WHERE type = 'event' AND active = 1 AND deleted_at IS NULL "
                f"AND access_count = 0 AND created_at < ? AND importance IN ({', '.join('?' for _ in levels)}) "
                "ORDER BY created_at, id LIMIT ?", (format_timestamp(created_before), *levels, limit),
            ).fetchall()
            return [self._revise(tx, _from_row(row), at, active=False, deleted_at=at, deleted_by=by,
                                 delete_reason=reason) for row in rows]

    @staticmethod
    def _find(connection: sqlite3.Connection, memory_id: str) -> Memory | None:
        row = connection.execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchone()
        return _from_row(row) if row else None

    def _revise(self, tx: sqlite3.Connection, current: Memory, at: datetime, **changes: Any) -> Memory:
        revised = current.model_copy(update={**changes, "updated_at": at, "revision": current.revision + 1})
        self._write(tx, revised)
        return revised

    # -- reads ----------------------------------------------------------------------------------------

    def get(self, memory_id: str) -> Memory | None:
        row = self._db.connection().execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchone()
        return _from_row(row) if row else None

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, Memory]:
        found: dict[str, Memory] = {}
        unique_ids = list(dict.fromkeys(memory_ids))
        for start in range(0, len(unique_ids), 500):
            chunk = unique_ids[start:start + 500]
            placeholders = ", ".join("?" for _ in chunk)
            rows = self._db.connection().execute(
                f"SELECT * FROM memories WHERE id IN ({placeholders})", chunk
            ).fetchall()
            found.update((row["id"], _from_row(row)) for row in rows)
        return found

    def find_active_duplicate(self, client_id: str, type_: str, content_hash: str) -> Memory | None:
        return self._active_duplicate(self._db.connection(), client_id, type_, content_hash)

    def query(self, query: RecordQuery) -> list[Memory]:
        clauses: list[str] = [] if query.include_deleted else ["deleted_at IS NULL"]
        params: list[Any] = []
        if not query.include_inactive:
            clauses.append("active = 1")
        for column in ("type", "source_agent", "client_id", "category", "key", "subject"):
            value = getattr(query, column)
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(str(value))
        if query.client_ids is not None:
            clauses.append(_one_of_clients(query.client_ids))
            params += query.client_ids
        if query.since is not None:
            clauses.append("created_at >= ?")
            params.append(format_timestamp(query.since))
        order = "created_at, id" if query.oldest_first else "created_at DESC, id DESC"
        where = " AND ".join(clauses) or "1 = 1"
        sql = f"SELECT * FROM memories WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?"
        rows = self._db.connection().execute(sql, [*params, query.limit, query.offset]).fetchall()
        return [_from_row(row) for row in rows]

    def thread_neighbours(self, memory: Memory, *, before: int, after: int) -> Neighbours:
        position = (memory.client_id, memory.source_agent, format_timestamp(memory.created_at), memory.id)
        connection = self._db.connection()
        previous = connection.execute(_THREAD_BEFORE, (*position, before)).fetchall() if before > 0 else []
        following = connection.execute(_THREAD_AFTER, (*position, after)).fetchall() if after > 0 else []
        return Neighbours(previous=[_from_row(row) for row in reversed(previous)],
                          following=[_from_row(row) for row in following])

    def iter_all(self, *, include_deleted: bool = False, batch_size: int = 500,
                 client_ids: Sequence[str] | None = None) -> Iterator[Memory]:
        condition = "" if include_deleted else "AND deleted_at IS NULL"
        clients: list[str] = []
        if client_ids is not None:
            condition += f" AND {_one_of_clients(client_ids)}"
            clients = list(client_ids)
        last_key = ("", "")
        while True:
            rows = self._db.connection().execute(
                f"SELECT * FROM memories WHERE (created_at, id) > (?, ?) {condition} "
                "ORDER BY created_at, id LIMIT ?", (*last_key, *clients, batch_size),
            ).fetchall()
            if not rows:
                return
            yield from (_from_row(row) for row in rows)
            last_key = (rows[-1]["created_at"], rows[-1]["id"])

    def pending_index(self, limit: int) -> list[Memory]:
        rows = self._db.connection().execute(
            f"SELECT * FROM memories INDEXED BY memories_index_queue WHERE index_pending = {PENDING} "
            "ORDER BY index_queued_at, id LIMIT ?", (limit,)
        ).fetchall()
        return [_from_row(row) for row in rows]

    def count(self) -> int:
        return int(self._db.connection().execute("SELECT COUNT(*) FROM memories").fetchone()[0])

    def stats(self, now: datetime, decay_factor: float) -> RecordStats:
        """A few COUNTs over covering indexes, in one read transaction so they agree with each other."""
        connection = self._db.connection()
        connection.execute("BEGIN")
        try:
            counters: Counter[str] = Counter()
            for type_, active, consolidated, count in connection.execute(_LIVE_COUNTS):
                state = tally_of(MemoryType(type_), active=bool(active), consolidated=bool(consolidated), deleted=False)
                counters.update({name: value * count for name, value in state.items()})
            counters[DELETED] = connection.execute(_DELETED_COUNT).fetchone()[0]
            pending, parked = (connection.execute(f"SELECT COUNT(*) FROM memories WHERE index_pending = {state}")
                               .fetchone()[0] for state in (PENDING, PARKED))
            decayed = self._count_decayed(connection, now, decay_factor)
        finally:
            connection.execute("COMMIT")
        return stats_from_counters(counters, decayed=decayed, pending_index=int(pending), parked_index=int(parked))

    # -- helpers --------------------------------------------------------------------------------------

    @staticmethod
    def _count_decayed(connection: sqlite3.Connection, now: datetime, decay_factor: float) -> int:
        """Per distinct confidence, a range count over the reference time: no confidence computed per row."""
        total = 0
        for (confidence,) in connection.execute(_DECAY_CONFIDENCES).fetchall():
            cutoff = decayed_before(confidence, now, decay_factor)
            if cutoff is not None:
                total += connection.execute(_DECAYED_COUNT, (confidence, format_timestamp(cutoff))).fetchone()[0]
        return total

    @staticmethod
    def _active_duplicate(
        connection: sqlite3.Connection, client_id: str, type_: str, content_hash: str
    ) -> Memory | None:
        row = connection.execute(
            "SELECT * FROM memories WHERE client_id = ? AND type = ? AND content_hash = ? AND active = 1",
            (client_id, type_, content_hash),
        ).fetchone()
        return _from_row(row) if row else None

    @staticmethod
    def _require(connection: sqlite3.Connection, memory_id: str) -> Memory:
        row = connection.execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchone()
        if row is None:
            raise NotFound(f"memory {memory_id} not found")
        return _from_row(row)

    def _observe(
        self, tx: sqlite3.Connection, existing: Memory, incoming: Memory, max_observers: int
    ) -> WriteOutcome:
        agent = incoming.source_agent
        if agent == existing.source_agent or agent in existing.observed_by:
            return WriteOutcome(kind=WriteKind.DEDUPLICATED, memory=existing)
        observers = existing.observed_by + ([agent] if len(existing.observed_by) < max_observers else [])
        corroborated = existing.model_copy(update={
            "observed_by": observers,
            "observation_count": existing.observation_count + 1,
            "last_observed_at": incoming.created_at,
        })
        tx.execute(
            "UPDATE memories SET observed_by = ?, observation_count = ?, last_observed_at = ? WHERE id = ?",
            (json.dumps(observers), corroborated.observation_count,
             format_timestamp(incoming.created_at), existing.id),
        )
        return WriteOutcome(kind=WriteKind.CORROBORATED, memory=corroborated)

    def _supersede_holder(self, tx: sqlite3.Connection, memory: Memory, *, at: datetime) -> Memory | None:
        """Supersedes the active fact with `memory.key` (or status with its subject) in the same client."""
        holder = self._label_holder(tx, memory)
        if holder is None:
            return None
        superseded = holder.model_copy(update={
            "active": False, "superseded_by": memory.id, "superseded_at": at, "valid_to": at,
            "updated_at": at, "revision": holder.revision + 1,
        })
        self._write(tx, superseded)
        return superseded

    @staticmethod
    def _label_holder(connection: sqlite3.Connection, memory: Memory) -> Memory | None:
        """The other active fact with `memory.key` (or status with its subject) in the same client, if any."""
        label_column, label = _supersede_label(memory)
        if label is None:
            return None
        row = connection.execute(
            f"SELECT * FROM memories WHERE client_id = ? AND type = ? AND {label_column} = ? "
            "AND active = 1 AND id != ?",
            (memory.client_id, memory.type.value, label, memory.id),
        ).fetchone()
        return _from_row(row) if row else None

    @staticmethod
    def _write(tx: sqlite3.Connection, memory: Memory) -> None:
        """Replaces the whole row and marks it for indexing."""
        tx.execute("DELETE FROM memories WHERE id = ?", (memory.id,))
        tx.execute(_INSERT, _to_row(memory))


def _supersede_label(memory: Memory) -> tuple[str, str | None]:
    if memory.type is MemoryType.FACT:
        return "key", memory.key
    if memory.type is MemoryType.STATUS:
        return "subject", memory.subject
    return "key", None


# Columns files written by earlier versions lack, with how to add them.
_ADDED_COLUMNS = {
    "entities": "entities TEXT NOT NULL DEFAULT '[]'",  # their memories have none yet
    "index_attempts": "index_attempts INTEGER NOT NULL DEFAULT 0",
    "index_error": "index_error TEXT",
    "index_queued_at": "index_queued_at TEXT",
}
# After the columns exist: the outbox's queue and parking lot, each ordered as it is read.
_OUTBOX_INDEXES = f"""
CREATE INDEX IF NOT EXISTS memories_index_queue ON memories (index_queued_at, id) WHERE index_pending = {PENDING};
CREATE INDEX IF NOT EXISTS memories_index_parked ON memories (index_queued_at, id) WHERE index_pending = {PARKED};
"""


def _upgrade(db: SQLiteDatabase) -> None:
    """Brings a file written by an earlier version up to this schema."""
    columns = {row["name"] for row in db.connection().execute("PRAGMA table_info(memories)")}
    missing = [definition for name, definition in _ADDED_COLUMNS.items() if name not in columns]
    with db.transaction() as tx:
        for definition in missing:
            tx.execute(f"ALTER TABLE memories ADD COLUMN {definition}")
        if "index_queued_at" not in columns:  # rows pending from before queue where their change put them
            tx.execute("UPDATE memories SET index_queued_at = updated_at")
        for statement in filter(str.strip, _OUTBOX_INDEXES.split(";")):
            tx.execute(statement)


def _one_of_clients(client_ids: Sequence[str]) -> str:
    """The SQL condition "client_id is one of these" (parameters follow); no client at all matches nothing."""
    return f"client_id IN ({', '.join('?' for _ in client_ids)})" if client_ids else "0"
