"""The embedded `CollectionStore`: a `collections` table, in the records database file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.kernel.timestamps import format_timestamp, parse_timestamp
from zengram.memory.domain.collections import Collection

SCHEMA = """
CREATE TABLE IF NOT EXISTS collections (
    name TEXT PRIMARY KEY,
    description TEXT,
    dimensions INTEGER NOT NULL,
    created_at TEXT NOT NULL
);
"""


def _from_row(row: sqlite3.Row) -> Collection:
    return Collection(name=row["name"], description=row["description"], dimensions=row["dimensions"],
                      created_at=parse_timestamp(row["created_at"]))


class SQLiteCollectionStore:
    def __init__(self, path: Path) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    def create(self, collection: Collection) -> bool:
        with self._db.transaction() as tx:
            return tx.execute(
                "INSERT OR IGNORE INTO collections (name, description, dimensions, created_at) VALUES (?, ?, ?, ?)",
                (collection.name, collection.description, collection.dimensions,
                 format_timestamp(collection.created_at))).rowcount > 0

    def get(self, name: str) -> Collection | None:
        row = self._db.connection().execute("SELECT * FROM collections WHERE name = ?", (name,)).fetchone()
        return _from_row(row) if row is not None else None

    def delete(self, name: str) -> bool:
        with self._db.transaction() as tx:
            return tx.execute("DELETE FROM collections WHERE name = ?", (name,)).rowcount > 0

    def list_all(self) -> list[Collection]:
        return [_from_row(row) for row in self._db.connection().execute("SELECT * FROM collections ORDER BY name")]
