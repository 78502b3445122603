"""The embedded `ApiKeyStore`: an `api_keys` table in the records database file (hashes only, never keys)."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from pathlib import Path

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.kernel.errors import Conflict
from zengram.kernel.keys import ApiKey, Role
from zengram.kernel.timestamps import format_timestamp, parse_timestamp

SCHEMA = """
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    role TEXT NOT NULL,
    clients TEXT,
    secret_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
"""


def _from_row(row: sqlite3.Row) -> ApiKey:
    return ApiKey(
        id=row["id"], name=row["name"], role=Role(row["role"]),
        clients=json.loads(row["clients"]) if row["clients"] is not None else None,
        secret_hash=row["secret_hash"], created_at=parse_timestamp(row["created_at"]),
        revoked_at=parse_timestamp(row["revoked_at"]) if row["revoked_at"] else None,
    )


class SQLiteApiKeyStore:
    def __init__(self, path: Path) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    def create(self, key: ApiKey) -> None:
        clients = json.dumps(key.clients) if key.clients is not None else None
        revoked = format_timestamp(key.revoked_at) if key.revoked_at else None
        try:
            with self._db.transaction() as tx:
                tx.execute(
                    "INSERT INTO api_keys (id, name, role, clients, secret_hash, created_at, revoked_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (key.id, key.name, key.role.value, clients, key.secret_hash, format_timestamp(key.created_at),
                     revoked),
                )
        except sqlite3.IntegrityError as error:
            raise Conflict(f"api key {key.id} already exists") from error

    def get(self, key_id: str) -> ApiKey | None:
        row = self._db.connection().execute("SELECT * FROM api_keys WHERE id = ?", (key_id,)).fetchone()
        return _from_row(row) if row is not None else None

    def list_all(self) -> list[ApiKey]:
        rows = self._db.connection().execute("SELECT * FROM api_keys ORDER BY created_at, id").fetchall()
        return [_from_row(row) for row in rows]

    def revoke(self, key_id: str, at: datetime) -> ApiKey | None:
        with self._db.transaction() as tx:
            rows = tx.execute(
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? RETURNING *",
                (format_timestamp(at), key_id),
            ).fetchall()
        return _from_row(rows[0]) if rows else None
