"""The HNSW graph kept beside the index file across restarts (#38): saved at a clean close, loaded at the next open
instead of rebuilt from every vector (which takes minutes at 100k rows and would take tens of minutes at 1M).

The graph's keys are matrix row numbers, and a reopened matrix numbers the rows it reads in rowid order: a saved
graph fits only the same documents in the same rows. So the file is trusted only when the index's `meta` holds
the stamp the close wrote (a digest of the documents' ids in row order, only written when no row is dead) and the
reopened matrix has the same stamp. The stamp is removed as soon as the file is taken up, so a process that dies
before its clean close leaves none, and the next open rebuilds the graph as before.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from zengram.adapters.sqlite.ann import HnswGraph
from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.adapters.sqlite.fts_tables import read_meta
from zengram.adapters.sqlite.vector_matrix import VectorMatrix

logger = logging.getLogger(__name__)

STAMP_KEY = "hnsw_graph_rows"
SAVE_TIMEOUT_SECONDS = 30.0  # how long a close waits for the graph to take the last writes before saving it


def graph_path(index_path: Path) -> Path:
    return index_path.with_suffix(".hnsw")


def rows_stamp(matrix: VectorMatrix) -> str | None:
    """The digest of the matrix's ids in row order; None when a row is dead (a reopened matrix would not have it,
    so every later row would move)."""
    snap = matrix.snapshot()
    if not bool(snap.alive[: snap.size].all()):
        return None
    digest = hashlib.sha256(f"{snap.size}:".encode())
    digest.update("\n".join(matrix.ids[: snap.size]).encode("utf-8"))
    return digest.hexdigest()


def take_saved_graph(db: SQLiteDatabase, index_path: Path, matrix: VectorMatrix) -> Path | None:
    """The saved graph's file when it fits `matrix` (see the module); its stamp is removed either way."""
    stamp = read_meta(db.connection(), STAMP_KEY)
    if stamp is None:
        return None
    with db.transaction() as tx:
        tx.execute("DELETE FROM meta WHERE key = ?", (STAMP_KEY,))
    path = graph_path(index_path)
    if path.is_file() and stamp == rows_stamp(matrix):
        return path
    logger.info("the saved HNSW vector graph does not fit the index's rows; building it again")
    return None


def save_graph(db: SQLiteDatabase, index_path: Path, matrix: VectorMatrix, graph: HnswGraph) -> bool:
    """Saves `graph` for the next open and stamps it; False (nothing stamped) when it cannot be trusted then."""
    stamp = rows_stamp(matrix)
    if stamp is None or not graph.save(graph_path(index_path), SAVE_TIMEOUT_SECONDS) or stamp != rows_stamp(matrix):
        return False
    with db.transaction() as tx:
        tx.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (STAMP_KEY, stamp))
    return True
