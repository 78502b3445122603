"""The embedded `ClientStore`: a `client_fingerprints` table, in the records database file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.kernel.timestamps import format_timestamp, parse_timestamp
from zengram.memory.domain.clients import ClientFingerprint

SCHEMA = """
CREATE TABLE IF NOT EXISTS client_fingerprints (
    client_id TEXT PRIMARY KEY,
    name TEXT,
    aliases TEXT NOT NULL,
    people TEXT NOT NULL,
    domains TEXT NOT NULL,
    keywords TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    revision INTEGER NOT NULL
);
"""

_LISTS = ("aliases", "people", "domains", "keywords")

# One statement: a concurrent writer of the same client either inserts first (and this one updates, keeping
# its created_at and adding one to its revision) or updates after; SQLite never interleaves the two.
_UPSERT = """
INSERT INTO client_fingerprints (client_id, name, aliases, people, domains, keywords, created_at, updated_at, revision)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)
ON CONFLICT (client_id) DO UPDATE SET
    name = excluded.name, aliases = excluded.aliases, people = excluded.people, domains = excluded.domains,
    keywords = excluded.keywords, updated_at = excluded.updated_at, revision = revision + 1
RETURNING *
"""


def _from_row(row: sqlite3.Row) -> ClientFingerprint:
    return ClientFingerprint(
        client_id=row["client_id"], name=row["name"],
        **{name: json.loads(row[name]) for name in _LISTS},
        created_at=parse_timestamp(row["created_at"]), updated_at=parse_timestamp(row["updated_at"]),
        revision=row["revision"],
    )


class SQLiteClientStore:
    """Fingerprints next to the memories (same file, own table); each write is one transaction."""

    def __init__(self, path: Path) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    def put(self, fingerprint: ClientFingerprint) -> ClientFingerprint:
        lists = [json.dumps(getattr(fingerprint, name), ensure_ascii=False) for name in _LISTS]
        with self._db.transaction() as tx:
            rows = tx.execute(_UPSERT, (
                fingerprint.client_id, fingerprint.name, *lists,
                format_timestamp(fingerprint.created_at), format_timestamp(fingerprint.updated_at),
            )).fetchall()  # all rows, so the statement is finished before COMMIT
        return _from_row(rows[0])

    def get(self, client_id: str) -> ClientFingerprint | None:
        row = self._db.connection().execute(
            "SELECT * FROM client_fingerprints WHERE client_id = ?", (client_id,)).fetchone()
        return _from_row(row) if row is not None else None

    def delete(self, client_id: str) -> bool:
        with self._db.transaction() as tx:
            return tx.execute("DELETE FROM client_fingerprints WHERE client_id = ?", (client_id,)).rowcount > 0

    def list_all(self) -> list[ClientFingerprint]:
        rows = self._db.connection().execute("SELECT * FROM client_fingerprints ORDER BY client_id").fetchall()
        return [_from_row(row) for row in rows]
