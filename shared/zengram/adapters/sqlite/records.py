"""The embedded `RecordStore`: one SQLite table, partial unique indexes backing dedup and supersede."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.kernel.outbox import MAX_ERROR_CHARS, IndexAttempts, ParkedRecord
from zengram.kernel.timestamps import format_timestamp, parse_timestamp
from zengram.memory.domain import lifecycle
from zengram.memory.domain.context import Neighbours
from zengram.memory.domain.lifecycle import Change
from zengram.memory.domain.models import (
    Importance,
    ImportKind,
    ImportOutcome,
    Memory,
    MemoryChanges,
    MemoryType,
    RecordQuery,
    WriteOutcome,
)
from zengram.memory.domain.stats import DELETED, RecordStats, decayed_before, stats_from_counters, tally_of

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
_DUPLICATE_PROBE = ("SELECT rowid FROM memories INDEXED BY memories_active_hash "
                    "WHERE client_id = ? AND type = ? AND content_hash = ? AND active = 1")
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
    """A search hydrates every fused candidate (~36 per search) through here: the columns are read in one pass (a
    `sqlite3.Row` looks each name up by a linear scan) and the usual empty JSON values are not parsed."""
    columns = dict(zip(row.keys(), row, strict=True))
    values = {name: columns[name] for name in Memory.model_fields}
    for name in _TIMESTAMP_FIELDS:
        values[name] = parse_timestamp(values[name]) if values[name] is not None else None
    for name in _JSON_FIELDS:
        text = values[name]
        values[name] = {} if text == "{}" else [] if text == "[]" else json.loads(text)
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

    @property
    def storage_full(self) -> str | None:
        """Why the last write found no room (a full disk), until a write succeeds again; read by GET /health."""
        return self._db.full

    # -- writes: each runs a domain transition (zengram.memory.domain.lifecycle) inside one transaction ------------

    def create_or_corroborate(self, memory: Memory, *, max_observers: int) -> WriteOutcome:
        with self._db.transaction() as tx:
            creation = lifecycle.create(memory, _Lookups(tx), max_observers=max_observers)
            if creation.observation is not None:
                self._count_observation(tx, creation.observation.after)
            self._persist(tx, creation.changes)
            return creation.outcome

    def import_memory(self, memory: Memory) -> ImportOutcome:
        with self._db.transaction() as tx:
            outcome = lifecycle.import_outcome(memory, _Lookups(tx))
            if outcome.kind is ImportKind.IMPORTED:
                self._persist(tx, [Change(None, memory)])
            return outcome

    def update(self, memory_id: str, changes: MemoryChanges, at: datetime, *,
               expected_revision: int | None = None) -> Memory:
        with self._db.transaction() as tx:
            lookups = _Lookups(tx)
            change = lifecycle.update(lifecycle.require(lookups, memory_id), changes, at, lookups,
                                      expected_revision=expected_revision)
            self._persist(tx, [change])
            return change.after

    def soft_delete(self, memory_id: str, by: str, reason: str | None, at: datetime) -> Memory:
        with self._db.transaction() as tx:
            current = lifecycle.require(_Lookups(tx), memory_id)
            deleted = current.soft_deleted(by, reason, at)
            if deleted is not current:
                self._persist(tx, [Change(current, deleted)])
            return deleted

    def restore(self, memory_id: str, at: datetime) -> list[Memory]:
        with self._db.transaction() as tx:
            lookups = _Lookups(tx)
            current = lifecycle.require(lookups, memory_id)
            changes = lifecycle.restore(current, at, lookups)
            self._persist(tx, changes)
            return [change.after for change in changes] or [current]

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
            return self._revise_each(tx, memory_ids, lambda memory: memory.marked_consolidated(at))

    def supersede_by(self, memory_ids: Sequence[str], superseded_by: str, at: datetime) -> list[Memory]:
        with self._db.transaction() as tx:
            return self._revise_each(tx, memory_ids, lambda memory: memory.merged_into(superseded_by, at))

    def expire_events(self, created_before: datetime, importances: Sequence[Importance], by: str, reason: str,
                      at: datetime, limit: int) -> list[Memory]:
        levels = [Importance(level).value for level in importances]
        if not levels or limit <= 0:
            return []
        with self._db.transaction() as tx:
            rows = tx.execute(
                "SELECT id FROM memories WHERE type = 'event' AND active = 1 AND deleted_at IS NULL "
                f"AND access_count = 0 AND created_at < ? AND importance IN ({', '.join('?' for _ in levels)}) "
                "ORDER BY created_at, id LIMIT ?", (format_timestamp(created_before), *levels, limit),
            ).fetchall()
            return self._revise_each(tx, [row["id"] for row in rows], lambda memory: memory.expired(by, reason, at))

    def _revise_each(self, tx: sqlite3.Connection, memory_ids: Sequence[str],
                     transition: Callable[[Memory], Memory | None]) -> list[Memory]:
        """Applies `transition` to each listed memory that exists (None: it stays as it is), in order."""
        lookups = _Lookups(tx)
        changes = [Change(current, revised) for current in map(lookups.find, dict.fromkeys(memory_ids))
                   if current is not None and (revised := transition(current)) is not None]
        self._persist(tx, changes)
        return [change.after for change in changes]

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
        return _active_with_content(self._db.connection(), client_id, type_, content_hash)

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

    def _count_observation(self, tx: sqlite3.Connection, observed: Memory) -> None:
        """A corroboration's counters: no revision, no index mark (no indexed field changes)."""
        tx.execute(
            "UPDATE memories SET observed_by = ?, observation_count = ?, last_observed_at = ? WHERE id = ?",
            (json.dumps(observed.observed_by), observed.observation_count,
             format_timestamp(observed.last_observed_at or observed.updated_at), observed.id),
        )

    @staticmethod
    def _persist(tx: sqlite3.Connection, changes: Sequence[Change]) -> None:
        """Writes each changed memory whole and marks it for indexing; the unique indexes check every row as it
        is written, so memories leaving the active set go first."""
        for change in lifecycle.deactivations_first(changes):
            tx.execute("DELETE FROM memories WHERE id = ?", (change.after.id,))
            tx.execute(_INSERT, _to_row(change.after))


class _Lookups:
    """`RecordLookups` inside one transaction."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def find(self, memory_id: str) -> Memory | None:
        return self._one("SELECT * FROM memories WHERE id = ?", (memory_id,))

    def active_with_content(self, memory: Memory) -> Memory | None:
        return _active_with_content(self._connection, memory.client_id, memory.type.value, memory.content_hash)

    def label_holder(self, memory: Memory) -> Memory | None:
        if memory.label is None:
            return None
        column, label = memory.label  # "key" or "subject": the column of that name
        return self._one(f"SELECT * FROM memories WHERE client_id = ? AND type = ? AND {column} = ? AND active = 1",
                         (memory.client_id, memory.type.value, label))

    def _one(self, sql: str, params: Sequence[Any]) -> Memory | None:
        row = self._connection.execute(sql, params).fetchone()
        return _from_row(row) if row else None


def _active_with_content(connection: sqlite3.Connection, client_id: str, type_: str,
                         content_hash: str) -> Memory | None:
    # Most writes are new: a rowid probe, answered from the unique index alone, says so without reading the table
    # (a `SELECT *` that finds nothing costs several times as much, #38); a duplicate's row is then read by rowid.
    # `INDEXED BY` names the index the planner picks anyway: left to choose, it weighs the table's partial indexes
    # against the bound values, so SQLite prepares the statement again at every execution (~45 µs, twice a write).
    found = connection.execute(_DUPLICATE_PROBE, (client_id, type_, content_hash)).fetchone()
    if found is None:
        return None
    row = connection.execute("SELECT * FROM memories WHERE rowid = ?", (found[0],)).fetchone()
    return _from_row(row) if row else None


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
