"""The embedded `ChunkIndex`: FTS5 for BM25 and an exact numpy matrix for cosine, in a SQLite file of its own
(separate from the memories' index). Vectors are kept in the file, so a restart reloads them without embedding.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.adapters.sqlite.fts_tables import RowsWithText, merge_segments_at, read_meta
from zengram.documents.domain.files import matches_any
from zengram.documents.ports import ChunkFilters, ChunkHit, IndexedChunk
from zengram.kernel.text import search_terms

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    vector BLOB NOT NULL,
    source TEXT NOT NULL,
    source_type TEXT NOT NULL,
    language TEXT
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(text, tokenize = 'porter unicode61 remove_diacritics 2');
"""
FIELDS = ("source", "source_type", "language")
_KEYWORD_FETCH_FACTOR = 4

CHUNKS = RowsWithText(table="chunks", fts="chunks_fts")


@dataclass
class _Rows:
    """The arrays a search reads; replaced, not resized in place, so a search never sees a half-grown matrix."""

    size: int
    vectors: npt.NDArray[np.float32]
    alive: npt.NDArray[np.bool_]
    codes: dict[str, npt.NDArray[np.int32]]


class _Matrix:
    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}
        self.vocabulary: dict[str, dict[str | None, int]] = {name: {} for name in FIELDS}
        self.lock = threading.Lock()
        self.rows = self._allocate(0, 1024)

    def _allocate(self, size: int, capacity: int) -> _Rows:
        return _Rows(size, np.zeros((capacity, self.dimension), dtype=np.float32), np.zeros(capacity, dtype=bool),
                     {name: np.full(capacity, -1, dtype=np.int32) for name in FIELDS})

    def put(self, chunk_id: str, vector: npt.NDArray[np.float32], fields: dict[str, str | None]) -> None:
        with self.lock:
            row = self.row_of.get(chunk_id)
            rows = self.rows
            if row is None:
                if rows.size == len(rows.alive):
                    grown = self._allocate(rows.size, 2 * len(rows.alive))
                    grown.vectors[: rows.size] = rows.vectors[: rows.size]
                    grown.alive[: rows.size] = rows.alive[: rows.size]
                    for name in FIELDS:
                        grown.codes[name][: rows.size] = rows.codes[name][: rows.size]
                    rows = grown
                row = rows.size
                self.ids.append(chunk_id)
                self.row_of[chunk_id] = row
            rows.vectors[row] = vector
            rows.alive[row] = True
            for name in FIELDS:
                rows.codes[name][row] = self.vocabulary[name].setdefault(fields[name], len(self.vocabulary[name]))
            self.rows = _Rows(max(rows.size, row + 1), rows.vectors, rows.alive, rows.codes)

    def remove(self, chunk_id: str) -> None:
        with self.lock:
            row = self.row_of.get(chunk_id)
            if row is not None:
                self.rows.alive[row] = False

    def mask(self, filters: ChunkFilters) -> npt.NDArray[np.bool_]:
        rows = self.rows
        mask = rows.alive[: rows.size].copy()
        wanted: dict[str, list[str] | None] = {
            "source_type": [value.value for value in filters.source_types] if filters.source_types else None,
            "language": list(filters.languages) if filters.languages else None,
        }
        for name, values in wanted.items():
            if values is not None:
                mask &= np.isin(rows.codes[name][: rows.size], self._codes(name, values))
        if filters.file_paths:
            patterns = list(filters.file_paths)
            sources = [code for source, code in self.vocabulary["source"].items()
                       if source is not None and matches_any(source, patterns)]
            mask &= np.isin(rows.codes["source"][: rows.size], np.array(sources, dtype=np.int32))
        return mask

    def _codes(self, name: str, values: list[str]) -> npt.NDArray[np.int32]:
        return np.array([self.vocabulary[name][value] for value in values if value in self.vocabulary[name]],
                        dtype=np.int32)


class EmbeddedChunkIndex:
    def __init__(self, path: Path) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)
        with self._db.transaction() as tx:
            merge_segments_at(tx, CHUNKS.fts)
        self._matrix: _Matrix | None = None
        self._load()

    def close(self) -> None:
        self._db.close()

    @property
    def model_id(self) -> str | None:
        return self._meta("model_id")

    def bind_model(self, model_id: str, dimension: int) -> None:
        with self._db.transaction() as tx:
            CHUNKS.bind_model(tx, model_id, dimension)
        if self._matrix is None or self._matrix.dimension != dimension:
            self._matrix = _Matrix(dimension)

    def upsert(self, chunks: Sequence[IndexedChunk]) -> None:
        if not chunks:
            return
        matrix = self._matrix
        if matrix is None:
            raise RuntimeError("bind_model() must be called before the first upsert")
        with self._db.transaction() as tx:
            for chunk in chunks:
                vector = np.asarray(chunk.vector, dtype=np.float32)
                if vector.shape != (matrix.dimension,):
                    raise ValueError(f"vector has shape {vector.shape}; the index holds {matrix.dimension} dimensions")
                values = (vector.tobytes(), chunk.source, chunk.source_type.value, chunk.language)
                existing = tx.execute("SELECT rowid FROM chunks WHERE id = ?", (chunk.id,)).fetchone()
                if existing is None:
                    rowid = tx.execute("INSERT INTO chunks (id, vector, source, source_type, language) "
                                       "VALUES (?, ?, ?, ?, ?)", (chunk.id, *values)).lastrowid
                else:
                    rowid = existing[0]
                    tx.execute("UPDATE chunks SET vector = ?, source = ?, source_type = ?, language = ? "
                               "WHERE rowid = ?", (*values, rowid))
                    tx.execute("DELETE FROM chunks_fts WHERE rowid = ?", (rowid,))
                tx.execute("INSERT INTO chunks_fts (rowid, text) VALUES (?, ?)", (rowid, chunk.text))
        for chunk in chunks:
            matrix.put(chunk.id, np.asarray(chunk.vector, dtype=np.float32), _fields(chunk))

    def delete(self, chunk_ids: Sequence[str]) -> None:
        if not chunk_ids:
            return
        with self._db.transaction() as tx:
            CHUNKS.delete(tx, chunk_ids)
        if self._matrix is not None:
            for chunk_id in chunk_ids:
                self._matrix.remove(chunk_id)

    def clear(self) -> None:
        with self._db.transaction() as tx:
            CHUNKS.clear(tx)
        self._matrix = None

    def count(self) -> int:
        return int(self._db.connection().execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    def vector_search(self, vector: npt.NDArray[np.float32], filters: ChunkFilters, k: int) -> list[ChunkHit]:
        matrix = self._matrix
        if matrix is None or k <= 0:
            return []
        mask = matrix.mask(filters)
        rows = np.flatnonzero(mask)
        if rows.size == 0:
            return []
        query = np.asarray(vector, dtype=np.float32)
        if rows.size * 4 < mask.size:  # a selective filter: copying the few rows beats scoring them all
            scores = matrix.rows.vectors[rows] @ query
        else:  # scoring the contiguous matrix in place avoids copying it
            scores = (matrix.rows.vectors[: mask.size] @ query)[rows]
        take = min(k, rows.size)
        best = np.argpartition(-scores, take - 1)[:take] if take < rows.size else np.arange(rows.size)
        hits = [ChunkHit(matrix.ids[rows[i]], float(scores[i])) for i in best]
        return sorted(hits, key=lambda hit: (-hit.score, hit.id))

    def keyword_search(self, text: str, filters: ChunkFilters, k: int) -> list[ChunkHit]:
        terms = search_terms(text)
        if not terms or k <= 0:
            return []
        match = " OR ".join(f'"{term}"' for term in terms)
        if filters.is_empty():  # rank in FTS5 alone: joining every match to `chunks` first costs twice as much
            ranked = self._db.connection().execute(
                "SELECT rowid, -bm25(chunks_fts) AS score FROM chunks_fts WHERE chunks_fts MATCH ? "
                "ORDER BY bm25(chunks_fts) LIMIT ?", (match, k)).fetchall()
            ids = self._ids([row["rowid"] for row in ranked])
            return [ChunkHit(ids[row["rowid"]], float(row["score"])) for row in ranked
                    if row["rowid"] in ids and float(row["score"]) > 0]
        clauses, params = _sql_filters(filters)
        fetch = k if not filters.file_paths else k * _KEYWORD_FETCH_FACTOR
        rows = self._db.connection().execute(
            "SELECT chunks.id AS id, chunks.source AS source, -bm25(chunks_fts) AS score FROM chunks_fts "
            f"JOIN chunks ON chunks.rowid = chunks_fts.rowid WHERE chunks_fts MATCH ?{clauses} "
            "ORDER BY bm25(chunks_fts), chunks.id LIMIT ?", [match, *params, fetch]).fetchall()
        if filters.file_paths:
            rows = [row for row in rows if matches_any(row["source"], list(filters.file_paths))]
        return [ChunkHit(row["id"], float(row["score"])) for row in rows[:k] if float(row["score"]) > 0]

    def _ids(self, rowids: list[int]) -> dict[int, str]:
        if not rowids:
            return {}
        rows = self._db.connection().execute(
            f"SELECT rowid, id FROM chunks WHERE rowid IN ({', '.join('?' for _ in rowids)})", rowids).fetchall()
        return {row["rowid"]: row["id"] for row in rows}

    def _meta(self, key: str) -> str | None:
        return read_meta(self._db.connection(), key)

    def _load(self) -> None:
        dimension = self._meta("dimension")
        if dimension is None:
            return
        matrix = _Matrix(int(dimension))
        for row in self._db.connection().execute("SELECT id, vector, source, source_type, language FROM chunks "
                                                 "ORDER BY rowid"):
            matrix.put(row["id"], np.frombuffer(row["vector"], dtype=np.float32),
                       {name: row[name] for name in FIELDS})
        self._matrix = matrix


def _fields(chunk: IndexedChunk) -> dict[str, str | None]:
    return {"source": chunk.source, "source_type": chunk.source_type.value, "language": chunk.language}


def _sql_filters(filters: ChunkFilters) -> tuple[str, list[object]]:
    clauses: list[str] = []
    params: list[object] = []
    if filters.source_types:
        clauses.append(f"chunks.source_type IN ({', '.join('?' for _ in filters.source_types)})")
        params += [value.value for value in filters.source_types]
    if filters.languages:
        clauses.append(f"chunks.language IN ({', '.join('?' for _ in filters.languages)})")
        params += list(filters.languages)
    return "".join(f" AND {clause}" for clause in clauses), params
