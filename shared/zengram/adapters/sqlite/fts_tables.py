"""What the two embedded search indexes (memories: `docs`, documents: `chunks`) do alike to their SQLite file:
a table of rows with an FTS5 twin sharing each row's rowid, and a `meta` table naming the embedding model."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class RowsWithText:
    """`table` holds one row per id; `fts` holds its text under the same rowid."""

    table: str
    fts: str

    def bind_model(self, tx: sqlite3.Connection, model_id: str, dimension: int) -> None:
        tx.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('model_id', ?)", (model_id,))
        tx.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('dimension', ?)", (str(dimension),))

    def delete(self, tx: sqlite3.Connection, ids: Sequence[str]) -> None:
        for row_id in ids:
            row = tx.execute(f"SELECT rowid FROM {self.table} WHERE id = ?", (row_id,)).fetchone()
            if row is not None:
                tx.execute(f"DELETE FROM {self.fts} WHERE rowid = ?", (row[0],))
                tx.execute(f"DELETE FROM {self.table} WHERE rowid = ?", (row[0],))

    def clear(self, tx: sqlite3.Connection) -> None:
        """Every row, its text, and the model the index was bound to."""
        tx.execute(f"DELETE FROM {self.table}")
        tx.execute(f"DELETE FROM {self.fts}")
        tx.execute("DELETE FROM meta")


# FTS5 merges a level's segments once this many exist (its default: 4). At 4, the merges a commit pays for grow
# with the index: a turn's index transaction cost 0.73 ms at 100k rows against 0.25 ms at 1k (mean of 400, with
# the merges); at 16 it cost 0.26 ms at 100k. Queries read up to 15 segments per level instead of 3, which the
# stores that answer keywords from FTS5 (below `keyword_memory_min_rows`) are small enough not to feel.
SEGMENTS_MERGED_AT = 16


def merge_segments_at(connection: sqlite3.Connection, fts: str, segments: int = SEGMENTS_MERGED_AT) -> None:
    """Sets `fts`'s automerge threshold (kept in the file: written once, by the first open that finds it unset)."""
    row = connection.execute(f"SELECT v FROM {fts}_config WHERE k = 'automerge'").fetchone()
    if row is None or int(row[0]) != segments:
        connection.execute(f"INSERT INTO {fts} ({fts}, rank) VALUES ('automerge', ?)", (segments,))


def read_meta(connection: sqlite3.Connection, key: str) -> str | None:
    row = connection.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return str(row[0]) if row else None
