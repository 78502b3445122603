"""The embedding cache in the documents' SQLite file (table `doc_embedding_cache`): float32 vectors as blobs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from zengram.adapters.sqlite.database import SQLiteDatabase

if TYPE_CHECKING:
    from zengram.documents.ports import Vectors

SCHEMA = "CREATE TABLE IF NOT EXISTS doc_embedding_cache (key TEXT PRIMARY KEY, vector BLOB NOT NULL);"
BATCH = 500


class SQLiteEmbeddingCache:
    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db
        with self._db.transaction() as tx:
            tx.execute(SCHEMA)

    def get(self, keys: Sequence[str]) -> dict[str, Vectors]:
        found: dict[str, Vectors] = {}
        for start in range(0, len(keys), BATCH):
            batch = list(keys[start : start + BATCH])
            rows = self._db.connection().execute(
                f"SELECT key, vector FROM doc_embedding_cache WHERE key IN ({','.join('?' * len(batch))})", batch)
            found.update({row["key"]: np.frombuffer(row["vector"], dtype=np.float32) for row in rows})
        return found

    def put(self, vectors: dict[str, Vectors]) -> None:
        with self._db.transaction() as tx:
            tx.executemany("INSERT OR REPLACE INTO doc_embedding_cache (key, vector) VALUES (?, ?)",
                           [(key, np.asarray(vector, dtype=np.float32).tobytes()) for key, vector in vectors.items()])

    def stats(self) -> tuple[int, int]:
        row = self._db.connection().execute(
            "SELECT COUNT(*) AS n, COALESCE(SUM(LENGTH(key) + LENGTH(vector)), 0) AS size FROM doc_embedding_cache"
        ).fetchone()
        return int(row["n"]), int(row["size"])

    def clear(self) -> int:
        with self._db.transaction() as tx:
            return int(tx.execute("DELETE FROM doc_embedding_cache").rowcount)
