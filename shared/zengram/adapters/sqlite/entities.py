"""The embedded `EntityStore`: the entity registry in SQLite, each change in one transaction."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from pathlib import Path

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.kernel.timestamps import format_timestamp, parse_timestamp
from zengram.memory.domain.entities import EntityRecord, EntityRef, EntityStats, EntityType, RelatedEntity

SCHEMA = """
CREATE TABLE IF NOT EXISTS entities (
    key TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    mention_count INTEGER NOT NULL,
    first_seen TEXT,
    last_seen TEXT
);
CREATE INDEX IF NOT EXISTS entities_by_mentions ON entities (mention_count DESC, key);
CREATE INDEX IF NOT EXISTS entities_by_type ON entities (type, mention_count DESC, key);
CREATE TABLE IF NOT EXISTS entity_links (
    entity_key TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    memory_created_at TEXT NOT NULL,
    PRIMARY KEY (entity_key, memory_id)
);
CREATE INDEX IF NOT EXISTS entity_links_by_memory ON entity_links (memory_id);
CREATE INDEX IF NOT EXISTS entity_links_newest ON entity_links (entity_key, memory_created_at DESC, memory_id DESC);
CREATE TABLE IF NOT EXISTS entity_edges (
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    strength INTEGER NOT NULL,
    PRIMARY KEY (a, b)
);
"""


# A newly linked entity: a new one is registered with one mention, a known one counts one more; either way its
# first and last sightings take in `seen` (a new memory links all its entities with this one statement each).
_MENTIONED = ("INSERT INTO entities (key, name, type, mention_count, first_seen, last_seen) VALUES (?, ?, ?, 1, ?, ?) "
              "ON CONFLICT (key) DO UPDATE SET mention_count = mention_count + 1, "
              "first_seen = MIN(COALESCE(first_seen, excluded.first_seen), excluded.first_seen), "
              "last_seen = MAX(COALESCE(last_seen, excluded.last_seen), excluded.last_seen)")


def _record(row: sqlite3.Row) -> EntityRecord:
    return EntityRecord(
        name=row["name"], type=EntityType(row["type"]), mention_count=row["mention_count"],
        first_seen=parse_timestamp(row["first_seen"]) if row["first_seen"] else None,
        last_seen=parse_timestamp(row["last_seen"]) if row["last_seen"] else None,
    )


def _pairs(keys: Iterable[str]) -> set[tuple[str, str]]:
    """Both directions of every pair: edges are stored once per direction so either end can list them."""
    ordered = sorted(set(keys))
    return {pair for a, b in itertools.combinations(ordered, 2) for pair in ((a, b), (b, a))}


class SQLiteEntityStore:
    def __init__(self, path: Path) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    # -- writes ---------------------------------------------------------------------------------------

    def set_mentions(self, memory_id: str, memory_created_at: datetime, entities: Sequence[EntityRef],
                     seen_at: datetime) -> None:
        wanted = {ref.key: ref for ref in reversed(entities)}  # the first mention of a key wins
        seen, created = format_timestamp(seen_at), format_timestamp(memory_created_at)
        with self._db.transaction() as tx:
            linked = {row[0] for row in tx.execute(
                "SELECT entity_key FROM entity_links WHERE memory_id = ?", (memory_id,))}
            for key in linked - wanted.keys():
                tx.execute("DELETE FROM entity_links WHERE entity_key = ? AND memory_id = ?", (key, memory_id))
                tx.execute("UPDATE entities SET mention_count = mention_count - 1 WHERE key = ?", (key,))
            for key in wanted.keys() - linked:  # one statement a newly linked entity, whether it is new or known
                ref = wanted[key]
                tx.execute(_MENTIONED, (key, ref.name, ref.type.value, seen, seen))
                tx.execute("INSERT INTO entity_links (entity_key, memory_id, memory_created_at) VALUES (?, ?, ?)",
                           (key, memory_id, created))
            still_linked = [(seen, seen, seen, seen, key) for key in wanted.keys() & linked]
            if still_linked:
                tx.executemany(
                    "UPDATE entities SET first_seen = MIN(COALESCE(first_seen, ?), ?), "
                    "last_seen = MAX(COALESCE(last_seen, ?), ?) WHERE key = ?", still_linked)
            before, after = _pairs(linked), _pairs(wanted)
            tx.executemany("UPDATE entity_edges SET strength = strength - 1 WHERE a = ? AND b = ?",
                           sorted(before - after))
            tx.executemany("INSERT INTO entity_edges (a, b, strength) VALUES (?, ?, 1) "
                           "ON CONFLICT (a, b) DO UPDATE SET strength = strength + 1", sorted(after - before))

    def set_type(self, key: str, new_type: EntityType) -> EntityRecord | None:
        with self._db.transaction() as tx:
            tx.execute("UPDATE entities SET type = ? WHERE key = ?", (new_type.value, key))
            row = tx.execute("SELECT * FROM entities WHERE key = ?", (key,)).fetchone()
        return _record(row) if row else None

    def remove_unlinked(self, key: str) -> bool:
        with self._db.transaction() as tx:
            removed = tx.execute("DELETE FROM entities WHERE key = ? AND mention_count = 0", (key,)).rowcount > 0
            if removed:  # its edges are all of strength 0 now
                tx.execute("DELETE FROM entity_edges WHERE (a = ? OR b = ?) AND strength <= 0", (key, key))
        return removed

    # -- reads ----------------------------------------------------------------------------------------

    def get(self, key: str) -> EntityRecord | None:
        row = self._db.connection().execute("SELECT * FROM entities WHERE key = ?", (key,)).fetchone()
        return _record(row) if row else None

    def get_many(self, keys: Sequence[str]) -> dict[str, EntityRecord]:
        found: dict[str, EntityRecord] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            chunk = unique[start:start + 500]
            rows = self._db.connection().execute(
                f"SELECT * FROM entities WHERE key IN ({', '.join('?' for _ in chunk)})", chunk).fetchall()
            found.update((row["key"], _record(row)) for row in rows)
        return found

    def list_entities(self, type_: EntityType | None, limit: int, offset: int) -> list[EntityRecord]:
        where, params = ("WHERE type = ?", [type_.value]) if type_ is not None else ("", [])
        rows = self._db.connection().execute(
            f"SELECT * FROM entities {where} ORDER BY mention_count DESC, key LIMIT ? OFFSET ?",
            [*params, limit, offset]).fetchall()
        return [_record(row) for row in rows]

    def related(self, key: str, limit: int) -> list[RelatedEntity]:
        rows = self._db.connection().execute(
            "SELECT entities.name AS name, entity_edges.strength AS strength FROM entity_edges "
            "JOIN entities ON entities.key = entity_edges.b WHERE entity_edges.a = ? AND entity_edges.strength > 0 "
            "ORDER BY entity_edges.strength DESC, entities.name LIMIT ?", (key, limit)).fetchall()
        return [RelatedEntity(name=row["name"], strength=row["strength"]) for row in rows]

    def memory_ids(self, key: str, limit: int | None = None) -> list[str]:
        rows = self._db.connection().execute(
            "SELECT memory_id FROM entity_links WHERE entity_key = ? "
            "ORDER BY memory_created_at DESC, memory_id DESC LIMIT ?", (key, -1 if limit is None else limit))
        return [row[0] for row in rows]

    def iter_memory_ids(self, key: str, page_size: int = 100) -> Iterator[str]:
        """Keyset pages over `entity_links_newest`: no cursor stays open between pages, and each page
        starts after the last row of the one before (`(memory_created_at, memory_id)` is unique per entity)."""
        page_size = max(page_size, 1)
        after: tuple[str, str] | None = None
        while True:
            if after is None:
                rows = self._db.connection().execute(
                    "SELECT memory_id, memory_created_at FROM entity_links WHERE entity_key = ? "
                    "ORDER BY memory_created_at DESC, memory_id DESC LIMIT ?", (key, page_size)).fetchall()
            else:
                rows = self._db.connection().execute(
                    "SELECT memory_id, memory_created_at FROM entity_links WHERE entity_key = ? "
                    "AND (memory_created_at, memory_id) < (?, ?) "
                    "ORDER BY memory_created_at DESC, memory_id DESC LIMIT ?", (key, *after, page_size)).fetchall()
            yield from (row["memory_id"] for row in rows)
            if len(rows) < page_size:
                return
            after = (rows[-1]["memory_created_at"], rows[-1]["memory_id"])

    def stats(self, top: int = 10) -> EntityStats:
        connection = self._db.connection()
        by_type = {row[0]: int(row[1]) for row in connection.execute(
            "SELECT type, COUNT(*) FROM entities GROUP BY type ORDER BY type")}
        return EntityStats(total=sum(by_type.values()), by_type=by_type,
                           top_mentioned=self.list_entities(None, top, 0))
