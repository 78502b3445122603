"""The embedded `SearchIndex`: FTS5 for BM25, a numpy matrix for cosine, one SQLite file.

Vector search is an exact scan of the matrix below `ann_min_rows` rows; above it an HNSW graph (`ann.py`)
proposes candidates that are re-scored exactly from the matrix (selective filters keep the exact scan of their
rows). The file keeps vectors and filter fields so a restart reloads the matrix without re-embedding; the
record store remains the source of truth (`zengram reindex` rebuilds this file from it).
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from zengram.adapters.sqlite.ann import GraphRows, HnswGraph, HnswParameters
from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.adapters.sqlite.fts_tables import RowsWithText, merge_segments_at, read_meta
from zengram.adapters.sqlite.keyword_postings import (
    BuiltPostings,
    FtsTokenizer,
    KeywordPostings,
    PostingsView,
    read_fts_postings,
)
from zengram.kernel.search import MEMORY_SCOPE, IndexAttributes, IndexDocument, IndexHit, SearchFilters
from zengram.kernel.text import search_terms

TOKENIZE = "porter unicode61 remove_diacritics 2"
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    vector BLOB NOT NULL,
    type TEXT NOT NULL,
    source_agent TEXT NOT NULL,
    client_id TEXT NOT NULL,
    category TEXT NOT NULL,
    knowledge_category TEXT,
    active INTEGER NOT NULL,
    valid_from REAL NOT NULL,
    valid_to REAL,
    created_at REAL NOT NULL,
    entities TEXT NOT NULL DEFAULT '',
    scope TEXT NOT NULL DEFAULT ''
);
CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5(text, tokenize = '{TOKENIZE}');
"""

CATEGORICAL_FIELDS = ("type", "source_agent", "client_id", "category", "knowledge_category")
_CODED_FIELDS = (*CATEGORICAL_FIELDS, "scope")  # kept as codes in the matrix; `scope` is filtered by `scopes`
_ATTRIBUTE_COLUMNS = (*CATEGORICAL_FIELDS, "active", "valid_from", "valid_to", "created_at", "entities", "scope")
# Entity keys are stored as one text, each wrapped in this separator, so `instr` finds a whole key.
_ENTITY_SEPARATOR = "\x1f"
_NO_END = math.inf
# HNSW candidates asked per hit wanted (beyond the filters' share), and a floor for small k: measured on the 100k
# benchmark store, recall@10 gains nothing past these.
_ANN_OVERFETCH = 1.5
_TERM_COUNTS_KEPT = 50_000  # query terms whose document counts are remembered (a few MB at most)
_ANN_EXTRA_CANDIDATES = 10


def _epoch(moment: datetime | None) -> float | None:
    return moment.timestamp() if moment is not None else None


def _attribute_values(attributes: IndexAttributes) -> list[object]:
    return [attributes.type, attributes.source_agent, attributes.client_id, attributes.category,
            attributes.knowledge_category, int(attributes.active), _epoch(attributes.valid_from),
            _epoch(attributes.valid_to), _epoch(attributes.created_at), _entity_text(attributes.entities),
            attributes.scope]


def _entity_text(keys: Sequence[str]) -> str:
    return "".join(f"{_ENTITY_SEPARATOR}{key}{_ENTITY_SEPARATOR}" for key in keys)


DOCS = RowsWithText(table="docs", fts="docs_fts")


@dataclass
class _Snapshot:
    """The arrays a search reads; replaced (not mutated) when the matrix grows."""

    size: int
    vectors: npt.NDArray[np.float32]
    alive: npt.NDArray[np.bool_]
    active: npt.NDArray[np.bool_]
    valid_from: npt.NDArray[np.float64]
    valid_to: npt.NDArray[np.float64]
    codes: dict[str, npt.NDArray[np.int32]]
    fts_rowids: npt.NDArray[np.int64]  # each row's document in `docs` / `docs_fts`


class _VectorMatrix:
    """Rows of unit vectors with their filter fields as arrays, so filtering is a vectorised mask."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}
        self.vocabulary: dict[str, dict[str | None, int]] = {name: {} for name in _CODED_FIELDS}
        # Entity key → rows mentioning it (an inverted index), and each row's keys to undo on change.
        self._entity_rows: dict[str, set[int]] = {}
        self._row_entities: dict[int, tuple[str, ...]] = {}
        self._lock = threading.Lock()
        self._snapshot = self._allocate(0, 1024)

    def _allocate(self, size: int, capacity: int) -> _Snapshot:
        return _Snapshot(
            size=size,
            vectors=np.zeros((capacity, self.dimension), dtype=np.float32),
            alive=np.zeros(capacity, dtype=bool),
            active=np.zeros(capacity, dtype=bool),
            valid_from=np.zeros(capacity, dtype=np.float64),
            valid_to=np.full(capacity, _NO_END, dtype=np.float64),
            codes={name: np.full(capacity, -1, dtype=np.int32) for name in _CODED_FIELDS},
            fts_rowids=np.zeros(capacity, dtype=np.int64),
        )

    def snapshot(self) -> _Snapshot:
        return self._snapshot

    def code(self, field: str, value: str | None) -> int | None:
        return self.vocabulary[field].get(value)

    def put(self, memory_id: str, vector: npt.NDArray[np.float32] | None, attributes: IndexAttributes,
            fts_rowid: int | None = None) -> int | None:
        """Sets a row's vector (when given) and fields; returns the row when its vector changed or it came back
        to life (what a graph over the rows must learn), else None."""
        with self._lock:
            row = self.row_of.get(memory_id)
            if row is None:
                if vector is None:
                    return None
                row = self._append_row(memory_id)
            snap = self._snapshot
            revived = not snap.alive[row]
            if vector is not None:
                snap.vectors[row] = vector
            if fts_rowid is not None:
                snap.fts_rowids[row] = fts_rowid
            snap.alive[row] = True
            snap.active[row] = attributes.active
            snap.valid_from[row] = attributes.valid_from.timestamp()
            snap.valid_to[row] = attributes.valid_to.timestamp() if attributes.valid_to else _NO_END
            for name in _CODED_FIELDS:
                value = getattr(attributes, name)
                snap.codes[name][row] = self.vocabulary[name].setdefault(value, len(self.vocabulary[name]))
            self._set_entities(row, attributes.entities)
            return row if vector is not None or revived else None

    def graph_rows(self) -> GraphRows:
        snap = self._snapshot
        return GraphRows(snap.size, snap.vectors, snap.alive)

    def _set_entities(self, row: int, keys: tuple[str, ...]) -> None:
        previous = self._row_entities.get(row, ())
        for key in set(previous) - set(keys):
            self._entity_rows[key].discard(row)
        for key in keys:
            self._entity_rows.setdefault(key, set()).add(row)
        self._row_entities[row] = keys

    def entity_rows(self, key: str, size: int) -> npt.NDArray[np.bool_]:
        """A mask of the first `size` rows: those whose document mentions the entity `key`."""
        mask = np.zeros(size, dtype=bool)
        with self._lock:  # writers mutate the sets in place
            rows = np.fromiter(self._entity_rows.get(key, ()), dtype=np.int64)
        mask[rows[rows < size]] = True
        return mask

    def remove(self, memory_id: str) -> int | None:
        with self._lock:
            row = self.row_of.get(memory_id)
            if row is not None:
                self._snapshot.alive[row] = False
            return row

    def _append_row(self, memory_id: str) -> int:
        snap = self._snapshot
        if snap.size == len(snap.alive):
            grown = self._allocate(snap.size, len(snap.alive) * 2)
            for name in ("vectors", "alive", "active", "valid_from", "valid_to", "fts_rowids"):
                getattr(grown, name)[: snap.size] = getattr(snap, name)[: snap.size]
            for name in _CODED_FIELDS:
                grown.codes[name][: snap.size] = snap.codes[name][: snap.size]
            snap = grown
        row = snap.size
        self.ids.append(memory_id)
        self.row_of[memory_id] = row
        # Publish the new size last: a concurrent search sees either the old or the new row set.
        self._snapshot = _Snapshot(row + 1, snap.vectors, snap.alive, snap.active, snap.valid_from,
                                   snap.valid_to, snap.codes, snap.fts_rowids)
        return row


class EmbeddedSearchIndex:
    """k-NN over a numpy matrix (exact, or HNSW candidates re-scored exactly) and BM25 over FTS5, persisted in
    one SQLite file."""

    def __init__(self, path: Path, *, keyword_postings_budget: int = 20_000, ann_min_rows: int | None = None,
                 hnsw: HnswParameters | None = None, keyword_memory_min_rows: int | None = None) -> None:
        """`keyword_postings_budget`: how many (term, document) matches one keyword query may score; see
        `_affordable_terms`. Small stores rarely reach it. `ann_min_rows`: from this many matrix rows on, an HNSW
        graph serves broad vector searches (0: always; None: never, every search is an exact scan).
        `keyword_memory_min_rows`: from this many rows on, keyword searches score in-memory postings
        (`keyword_postings.py`) instead of asking FTS5 (0: always; None: never); same hits, same scores."""
        _blas_on_one_thread()
        self._db = SQLiteDatabase(path, SCHEMA)
        _add_entities_column(self._db)
        _add_scope_column(self._db)
        with self._db.transaction() as tx:
            merge_segments_at(tx, DOCS.fts)
        self._postings_budget = keyword_postings_budget
        # Documents per query term, valid until the next change of the FTS5 texts (see `_term_frequencies`).
        self._term_counts: dict[str, int] = {}
        self._texts_generation = 0
        self._ann_min_rows = ann_min_rows
        self._hnsw = hnsw
        self._matrix: _VectorMatrix | None = None
        self._graph: HnswGraph | None = None
        self._graph_lock = threading.Lock()
        self._keyword_memory_min_rows = keyword_memory_min_rows
        self._keywords: KeywordPostings | None = None
        self._tokenizer: FtsTokenizer | None = None
        self._load()

    def close(self) -> None:
        self._drop_graph()
        self._drop_keywords()
        if self._tokenizer is not None:
            self._tokenizer.close()
        self._db.close()

    def wait_for_graph(self, timeout: float) -> bool:
        """Whether broad vector searches use the HNSW graph, waiting up to `timeout` seconds for its build
        (benchmarks and tests; serving never waits: the exact scan answers meanwhile)."""
        graph = self._graph
        return graph is not None and graph.ready.wait(timeout)

    def wait_for_graph_writes(self, timeout: float) -> bool:
        """Whether the HNSW graph is built and holds every write made so far, waiting up to `timeout` seconds
        (benchmarks and tests: until then a search scores the rows not in it exactly)."""
        graph = self._graph
        return graph is not None and graph.wait_until_applied(timeout)

    def wait_for_keywords(self, timeout: float) -> bool:
        """Whether keyword searches score the in-memory postings, waiting up to `timeout` seconds for their
        build (benchmarks and tests; serving never waits: FTS5 answers meanwhile)."""
        keywords = self._keywords
        return keywords is not None and keywords.ready.wait(timeout)

    # -- model binding --------------------------------------------------------------------------------

    @property
    def model_id(self) -> str | None:
        return self._meta("model_id")

    @property
    def dimension(self) -> int | None:
        value = self._meta("dimension")
        return int(value) if value is not None else None

    def bind_model(self, model_id: str, dimension: int) -> None:
        with self._db.transaction() as tx:
            DOCS.bind_model(tx, model_id, dimension)
        if self._matrix is None or self._matrix.dimension != dimension:
            self._drop_graph()
            self._drop_keywords()
            self._matrix = _VectorMatrix(dimension)
            self._attach_graph_when_due()
            self._attach_keywords_when_due()

    # -- writes ---------------------------------------------------------------------------------------

    def upsert(self, documents: Sequence[IndexDocument]) -> None:
        if not documents:
            return
        matrix = self._require_matrix(documents[0].vector.shape[-1])
        with self._db.transaction() as tx:
            fts_rowids = [self._write_document(tx, document) for document in documents]
        self._texts_changed()
        rows = [matrix.put(document.id, document.vector.astype(np.float32, copy=False), document.attributes, rowid)
                for document, rowid in zip(documents, fts_rowids, strict=True)]
        self._graph_follows(matrix, rows)
        self._keywords_follow(matrix, {document.id: document.text for document in documents})
        self._attach_graph_when_due()
        self._attach_keywords_when_due()

    def set_attributes(self, updates: dict[str, IndexAttributes]) -> None:
        if not updates:
            return
        assignments = ", ".join(f"{column} = ?" for column in _ATTRIBUTE_COLUMNS)
        with self._db.transaction() as tx:
            tx.executemany(
                f"UPDATE docs SET {assignments} WHERE id = ?",
                [[*_attribute_values(attributes), memory_id] for memory_id, attributes in updates.items()],
            )
        matrix = self._matrix
        if matrix is not None:
            self._graph_follows(matrix, [matrix.put(memory_id, None, attributes)
                                         for memory_id, attributes in updates.items()])

    def set_texts(self, texts: dict[str, str]) -> None:
        """Replaces the FTS5 text alone: the vector (and its matrix row) and the filter fields stay."""
        if not texts:
            return
        replaced: dict[str, str] = {}
        with self._db.transaction() as tx:
            for memory_id, text in texts.items():
                row = tx.execute("SELECT rowid FROM docs WHERE id = ?", (memory_id,)).fetchone()
                if row is not None:
                    tx.execute("DELETE FROM docs_fts WHERE rowid = ?", (row[0],))
                    tx.execute("INSERT INTO docs_fts (rowid, text) VALUES (?, ?)", (row[0], text))
                    replaced[memory_id] = text
        self._texts_changed()
        matrix = self._matrix
        if matrix is not None:
            self._keywords_follow(matrix, replaced)

    def delete(self, memory_ids: Sequence[str]) -> None:
        with self._db.transaction() as tx:
            DOCS.delete(tx, memory_ids)
        self._texts_changed()
        matrix = self._matrix
        if matrix is not None:
            removed = [matrix.remove(memory_id) for memory_id in memory_ids]
            self._graph_follows(matrix, removed)
            keywords = self._keywords
            if keywords is not None:
                keywords.changed({row: None for row in removed if row is not None})

    def clear(self) -> None:
        with self._db.transaction() as tx:
            DOCS.clear(tx)
        self._texts_changed()
        self._drop_graph()
        self._drop_keywords()
        self._matrix = None

    # -- searches -------------------------------------------------------------------------------------

    def vector_search(self, vector: npt.NDArray[np.float32], filters: SearchFilters, k: int) -> list[IndexHit]:
        matrix = self._matrix
        if matrix is None or k <= 0:
            return []
        snap = matrix.snapshot()
        mask = self._mask(matrix, snap, filters)
        if mask is None:
            return []
        kept = int(np.count_nonzero(mask))
        if kept == 0:
            return []
        query = np.asarray(vector, dtype=np.float32)
        selective = kept * 4 < mask.size
        rows = None if selective else self._graph_candidates(query, mask, kept, k)
        if rows is not None:  # the graph's candidates that pass the filters, re-scored exactly
            scores = snap.vectors[rows] @ query
        else:
            rows = np.flatnonzero(mask)
            if selective:  # copying the few rows beats scoring them all
                scores = snap.vectors[rows] @ query
            else:  # scoring the contiguous matrix in place avoids copying it (150 MB at 100k rows)
                scores = (snap.vectors[: mask.size] @ query)[rows]
        take = min(k, rows.size)
        best = np.argpartition(-scores, take - 1)[:take] if take < rows.size else np.arange(rows.size)
        hits = [IndexHit(id=matrix.ids[rows[i]], score=float(scores[i])) for i in best]
        hits.sort(key=lambda hit: (-hit.score, hit.id))
        return hits

    def _graph_candidates(self, query: npt.NDArray[np.float32], mask: npt.NDArray[np.bool_], kept: int,
                          k: int) -> npt.NDArray[np.int64] | None:
        """Rows the HNSW graph proposes that pass `mask`, or None for the exact scan: no graph (yet), or fewer
        than `k` of its candidates survive the filters (the scan never finds fewer hits than exact would)."""
        graph = self._graph
        if graph is None:
            return None
        # Over-fetch in proportion to the rows the filters drop, so about `k` candidates survive them.
        wanted = math.ceil(k * mask.size / kept * _ANN_OVERFETCH) + _ANN_EXTRA_CANDIDATES
        candidates = graph.nearest_rows(query, wanted)
        if candidates is None:
            return None
        candidates = candidates[candidates < mask.size]  # rows appended after this search's snapshot
        survivors = candidates[mask[candidates]]
        return survivors if survivors.size >= min(k, kept) else None

    def keyword_search(self, text: str, filters: SearchFilters, k: int) -> list[IndexHit]:
        terms = search_terms(text)
        if not terms or k <= 0:
            return []
        keywords = self._keywords
        if keywords is not None and keywords.ready.is_set():
            hits = self._keyword_search_in_memory(keywords, terms, filters, k)
            if hits is not None:
                return hits
        match = " OR ".join(f'"{term}"' for term in self._affordable_terms(terms, self._term_frequencies))
        if filters == SearchFilters():
            hits = self._rank_then_filter(match, k)
            if hits is not None:
                return hits
        selected = self._selected_documents(filters)
        if selected is not None:
            return self._rank_among(match, selected, k)
        clauses, params = self._sql_filters(filters)
        where = "".join(f" AND {clause}" for clause in clauses)
        rows = self._db.connection().execute(
            "SELECT docs.id AS id, -bm25(docs_fts) AS score FROM docs_fts JOIN docs ON docs.rowid = docs_fts.rowid "
            f"WHERE docs_fts MATCH ?{where} ORDER BY bm25(docs_fts), docs.id LIMIT ?",
            [match, *params, k],
        ).fetchall()
        return [IndexHit(id=row["id"], score=float(row["score"])) for row in rows]

    def _keyword_search_in_memory(self, keywords: KeywordPostings, terms: list[str], filters: SearchFilters,
                                  k: int) -> list[IndexHit] | None:
        """The FTS5 query's answer — same kept terms, same scores, ties by id — from the in-memory postings and
        the matrix's filter mask; None when a word is not one FTS5 token (FTS5 reads it as a phrase) or the
        postings went out of use."""
        matrix = self._matrix
        tokens = keywords.tokenizer.tokens_of_words(terms)
        if matrix is None or any(len(tokens[term]) != 1 for term in terms):
            return None
        token_of = {term: tokens[term][0] for term in terms}
        view = keywords.view(token_of.values())
        if view is None:
            return None
        kept = self._affordable_terms(terms, lambda asked: _document_counts(view, token_of, asked))
        snap = matrix.snapshot()
        mask = self._mask(matrix, snap, filters)
        if mask is None:
            return []
        scores = view.bm25_scores([token_of[term] for term in kept])
        size = min(scores.size, mask.size)  # rows written after either snapshot wait for the next search
        candidates = np.flatnonzero((scores[:size] > 0) & mask[:size])
        if candidates.size > k:  # the k best, and every row tied with the k-th (ties go by id)
            candidate_scores = scores[candidates]
            kth_best = np.partition(candidate_scores, candidates.size - k)[candidates.size - k]
            candidates = candidates[candidate_scores >= kth_best]
        hits = sorted((IndexHit(id=matrix.ids[row], score=float(scores[row])) for row in candidates),
                      key=lambda hit: (-hit.score, hit.id))
        return hits[:k]

    def _selected_documents(self, filters: SearchFilters) -> npt.NDArray[np.int64] | None:
        """The `docs` rowids a selective filter keeps (under a quarter of the rows), from the matrix's filter mask;
        None when the filters keep many rows (or there is no matrix): then SQL filters the matches."""
        matrix = self._matrix
        if matrix is None:
            return None
        snap = matrix.snapshot()
        mask = self._mask(matrix, snap, filters)
        if mask is None:
            return np.empty(0, dtype=np.int64)
        rows = np.flatnonzero(mask)
        return snap.fts_rowids[rows] if rows.size * 4 < mask.size else None

    def _rank_among(self, match: str, rowids: npt.NDArray[np.int64], k: int) -> list[IndexHit]:
        """BM25 ranking of the matches among `rowids` only. Checking each match's rowid against that list (the
        unary `+` keeps it a filter, not a per-rowid FTS5 lookup) before joining `docs` spares reading the
        `docs` row (its vector overflows the page) of every match the filter drops: 3 ms instead of 14 ms for
        one client among 50 at 100k documents."""
        if rowids.size == 0:
            return []
        rows = self._db.connection().execute(
            "SELECT docs.id AS id, -bm25(docs_fts) AS score FROM docs_fts JOIN docs ON docs.rowid = docs_fts.rowid "
            "WHERE docs_fts MATCH ? AND +docs_fts.rowid IN (SELECT value FROM json_each(?)) "
            "ORDER BY bm25(docs_fts), docs.id LIMIT ?",
            [match, json.dumps(rowids.tolist()), k],
        ).fetchall()
        return [IndexHit(id=row["id"], score=float(row["score"])) for row in rows]

    def count(self) -> int:
        return int(self._db.connection().execute("SELECT COUNT(*) FROM docs").fetchone()[0])

    def _affordable_terms(self, terms: list[str],
                          frequencies: Callable[[list[str]], dict[str, int]]) -> list[str]:
        """The query's terms, rarest first, while their matches fit the postings budget (the rarest always).

        FTS5 scores every document that matches any term, so one word found in a quarter of a large store
        makes a query slow while adding little to BM25 (its IDF is low). Leaving the most frequent words out
        once the budget is spent bounds the cost; below the budget nothing changes.
        """
        if len(terms) == 1:
            return terms
        frequency = frequencies(terms)
        kept: list[str] = []
        spent = 0
        for term in sorted(terms, key=lambda t: (frequency[t], t)):
            if kept and spent + frequency[term] > self._postings_budget:
                break
            kept.append(term)
            spent += frequency[term]
        return kept

    def _term_frequencies(self, terms: list[str]) -> dict[str, int]:
        """How many documents match each term. FTS5 exposes no O(1) count (fts5vocab walks the postings too, and
        wants the stemmed form), so the counts are kept until the texts change: a read-mostly store (and each
        query's common words) skips the `COUNT` queries. A count taken while a write lands is not kept."""
        generation, known = self._texts_generation, self._term_counts
        connection = self._db.connection()
        counted = {
            term: int(connection.execute("SELECT COUNT(*) FROM docs_fts WHERE docs_fts MATCH ?",
                                         (f'"{term}"',)).fetchone()[0])
            for term in terms if term not in known
        }
        if counted and generation == self._texts_generation and len(known) < _TERM_COUNTS_KEPT:
            known.update(counted)  # a write since replaced `known` with an empty dict: this update is dropped
        return {term: counted[term] if term in counted else known[term] for term in terms}

    def _texts_changed(self) -> None:
        self._texts_generation += 1
        self._term_counts = {}

    def _rank_then_filter(self, match: str, k: int) -> list[IndexHit] | None:
        """The common unfiltered search: rank in FTS5 alone, then drop inactive rows.

        Joining every matching row to `docs` before ranking doubles the cost when query words are common;
        ranking a few more than `k` and filtering after is exact unless too many of them are inactive, in
        which case this returns None and the caller runs the joined query.
        """
        fetch = 2 * k + 16
        ranked = self._db.connection().execute(
            "SELECT rowid, -bm25(docs_fts) AS score FROM docs_fts WHERE docs_fts MATCH ? "
            "ORDER BY bm25(docs_fts) LIMIT ?", (match, fetch),
        ).fetchall()
        if not ranked:
            return []
        scores = {row["rowid"]: float(row["score"]) for row in ranked}
        placeholders = ", ".join("?" for _ in scores)
        active = self._db.connection().execute(
            f"SELECT rowid, id FROM docs WHERE rowid IN ({placeholders}) AND active = 1 AND scope = ?",
            [*scores, MEMORY_SCOPE],
        ).fetchall()
        if len(active) < k and len(ranked) == fetch:
            return None
        hits = sorted((IndexHit(id=row["id"], score=scores[row["rowid"]]) for row in active),
                      key=lambda hit: (-hit.score, hit.id))
        return hits[:k]

    # -- helpers --------------------------------------------------------------------------------------

    def _meta(self, key: str) -> str | None:
        return read_meta(self._db.connection(), key)

    def _require_matrix(self, dimension: int) -> _VectorMatrix:
        if self._matrix is None:
            raise RuntimeError("bind_model() must be called before the first upsert")
        if self._matrix.dimension != dimension:
            raise ValueError(f"vector has {dimension} dimensions; the index holds {self._matrix.dimension}")
        return self._matrix

    def _attach_graph_when_due(self) -> None:
        """Starts building the HNSW graph once the matrix reaches `ann_min_rows` rows (derived: rebuilt on open)."""
        matrix = self._matrix
        if self._ann_min_rows is None or matrix is None or self._graph is not None:
            return
        if matrix.snapshot().size < self._ann_min_rows:
            return
        with self._graph_lock:
            if self._graph is None and self._matrix is matrix:
                graph = HnswGraph(matrix.dimension, self._hnsw)
                # an empty graph is ready at once (a new store with a threshold of 0)
                graph.start_build(matrix.graph_rows, background=matrix.snapshot().size > 0)
                self._graph = graph

    def _graph_follows(self, matrix: _VectorMatrix, rows: Sequence[int | None]) -> None:
        graph = self._graph
        changed = [row for row in rows if row is not None]
        if graph is not None and changed and matrix is self._matrix:
            graph.changed(changed)

    def _attach_keywords_when_due(self) -> None:
        """Starts building the in-memory keyword postings once the matrix reaches `keyword_memory_min_rows` rows
        (derived from FTS5: rebuilt on open, in the background; FTS5 answers until they are ready)."""
        matrix = self._matrix
        if self._keyword_memory_min_rows is None or matrix is None or self._keywords is not None:
            return
        size = matrix.snapshot().size
        if size < self._keyword_memory_min_rows:
            return
        with self._graph_lock:
            if self._keywords is None and self._matrix is matrix:
                if self._tokenizer is None:
                    self._tokenizer = FtsTokenizer(TOKENIZE)
                keywords = KeywordPostings(self._tokenizer)
                self._keywords = keywords

                def read() -> BuiltPostings:
                    return read_fts_postings(self._db.connection(), DOCS.fts, DOCS.table, matrix.row_of.get)

                keywords.start_build(read, background=size > 0)

    def _keywords_follow(self, matrix: _VectorMatrix, texts: dict[str, str]) -> None:
        """The in-memory postings learn the documents' new texts (tokenised by their maintainer, off this write)."""
        keywords = self._keywords
        if keywords is None or not texts or matrix is not self._matrix:
            return
        keywords.changed({row: text for memory_id, text in texts.items()
                          if (row := matrix.row_of.get(memory_id)) is not None})

    def _drop_keywords(self) -> None:
        with self._graph_lock:
            keywords, self._keywords = self._keywords, None
        if keywords is not None:
            keywords.close()

    def _drop_graph(self) -> None:
        with self._graph_lock:
            graph, self._graph = self._graph, None
        if graph is not None:
            graph.close()

    def _load(self) -> None:
        """Reads every stored vector into the matrix (a restart must not re-embed)."""
        dimension = self.dimension
        if dimension is None:
            return
        matrix = _VectorMatrix(dimension)
        cursor = self._db.connection().execute(
            f"SELECT rowid, id, vector, {', '.join(_ATTRIBUTE_COLUMNS)} FROM docs ORDER BY rowid"
        )
        for row in cursor:
            vector = np.frombuffer(row["vector"], dtype=np.float32)
            matrix.put(row["id"], vector, _attributes_from_row(row), row["rowid"])
        self._matrix = matrix
        self._attach_graph_when_due()
        self._attach_keywords_when_due()

    def _write_document(self, tx: sqlite3.Connection, document: IndexDocument) -> int:
        blob = np.asarray(document.vector, dtype=np.float32).tobytes()
        values = _attribute_values(document.attributes)
        existing = tx.execute("SELECT rowid FROM docs WHERE id = ?", (document.id,)).fetchone()
        if existing is None:
            cursor = tx.execute(
                f"INSERT INTO docs (id, vector, {', '.join(_ATTRIBUTE_COLUMNS)}) "
                f"VALUES (?, ?, {', '.join('?' for _ in _ATTRIBUTE_COLUMNS)})",
                [document.id, blob, *values],
            )
            rowid = int(cursor.lastrowid or 0)
        else:
            rowid = int(existing[0])
            assignments = ", ".join(f"{column} = ?" for column in _ATTRIBUTE_COLUMNS)
            tx.execute(f"UPDATE docs SET vector = ?, {assignments} WHERE rowid = ?", [blob, *values, rowid])
            tx.execute("DELETE FROM docs_fts WHERE rowid = ?", (rowid,))
        tx.execute("INSERT INTO docs_fts (rowid, text) VALUES (?, ?)", (rowid, document.text))
        return rowid

    def _mask(self, matrix: _VectorMatrix, snap: _Snapshot, filters: SearchFilters) -> npt.NDArray[np.bool_] | None:
        size = snap.size
        mask = snap.alive[:size].copy()
        if not (filters.include_inactive or filters.at_time):
            mask &= snap.active[:size]
        for name in CATEGORICAL_FIELDS:
            wanted = getattr(filters, name)
            if wanted is None:
                continue
            code = matrix.code(name, wanted)
            if code is None:
                return None
            mask &= snap.codes[name][:size] == code
        if filters.client_ids is not None:
            codes = [code for code in (matrix.code("client_id", c) for c in filters.client_ids) if code is not None]
            if not codes:
                return None
            mask &= _one_of(snap.codes["client_id"][:size], codes)
        scope_codes = [code for code in (matrix.code("scope", scope) for scope in filters.scopes) if code is not None]
        if not scope_codes:
            return None
        mask &= _one_of(snap.codes["scope"][:size], scope_codes)
        if filters.at_time is not None:
            moment = filters.at_time.timestamp()
            mask &= (snap.valid_from[:size] <= moment) & (snap.valid_to[:size] > moment)
        if filters.date_from is not None:
            mask &= snap.valid_from[:size] >= filters.date_from.timestamp()
        if filters.date_to is not None:
            mask &= snap.valid_from[:size] <= filters.date_to.timestamp()
        if filters.entity is not None:
            mask &= matrix.entity_rows(filters.entity, size)
        return mask

    @staticmethod
    def _sql_filters(filters: SearchFilters) -> tuple[list[str], list[object]]:
        clauses: list[str] = []
        params: list[object] = []
        if not (filters.include_inactive or filters.at_time):
            clauses.append("docs.active = 1")
        for name in CATEGORICAL_FIELDS:
            value = getattr(filters, name)
            if value is not None:
                clauses.append(f"docs.{name} = ?")
                params.append(value)
        if filters.client_ids is not None:
            clauses.append(f"docs.client_id IN ({', '.join('?' for _ in filters.client_ids)})"
                           if filters.client_ids else "0")
            params += filters.client_ids
        clauses.append(f"docs.scope IN ({', '.join('?' for _ in filters.scopes)})" if filters.scopes else "0")
        params += filters.scopes
        if filters.at_time is not None:
            clauses.append("docs.valid_from <= ? AND (docs.valid_to IS NULL OR docs.valid_to > ?)")
            params += [filters.at_time.timestamp()] * 2
        if filters.date_from is not None:
            clauses.append("docs.valid_from >= ?")
            params.append(filters.date_from.timestamp())
        if filters.date_to is not None:
            clauses.append("docs.valid_from <= ?")
            params.append(filters.date_to.timestamp())
        if filters.entity is not None:
            clauses.append("instr(docs.entities, ?) > 0")
            params.append(_entity_text([filters.entity]))
        return clauses, params


def _document_counts(view: PostingsView, token_of: dict[str, str], terms: list[str]) -> dict[str, int]:
    return {term: view.document_count(token_of[term]) for term in terms}


def _one_of(column: npt.NDArray[np.int32], codes: list[int]) -> npt.NDArray[np.bool_]:
    """`np.isin`, but a single code (one scope, one client: the usual case) is a plain comparison: 0.005 ms
    instead of 0.4 ms at 100k rows (isin sorts)."""
    if len(codes) == 1:
        return np.equal(column, codes[0])
    return np.isin(column, codes)


def _blas_on_one_thread() -> None:
    """Scoring rows is memory-bound: a second BLAS thread halves no wall time worth having and, on a 2-core host,
    spins against the query embedding and FTS5 threads (a 2k-row filtered scan measured 0.9 ms on one thread,
    3.6 ms on two under load). Process-wide, as the numpy embedder does."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def _add_entities_column(db: SQLiteDatabase) -> None:
    """Index files written before entities existed lack the column (`zengram reindex` fills it)."""
    columns = {row["name"] for row in db.connection().execute("PRAGMA table_info(docs)")}
    if "entities" not in columns:
        with db.transaction() as tx:
            tx.execute("ALTER TABLE docs ADD COLUMN entities TEXT NOT NULL DEFAULT ''")


def _add_scope_column(db: SQLiteDatabase) -> None:
    """Index files written before scopes existed hold Zengram memories only: the column's default says so."""
    columns = {row["name"] for row in db.connection().execute("PRAGMA table_info(docs)")}
    if "scope" not in columns:
        with db.transaction() as tx:
            tx.execute("ALTER TABLE docs ADD COLUMN scope TEXT NOT NULL DEFAULT ''")


def _attributes_from_row(row: sqlite3.Row) -> IndexAttributes:
    from datetime import UTC

    def moment(value: float | None) -> datetime | None:
        return datetime.fromtimestamp(value, UTC) if value is not None else None

    return IndexAttributes(
        type=row["type"], source_agent=row["source_agent"], client_id=row["client_id"],
        category=row["category"], knowledge_category=row["knowledge_category"], active=bool(row["active"]),
        valid_from=moment(row["valid_from"]) or datetime.fromtimestamp(0, UTC),
        valid_to=moment(row["valid_to"]), created_at=moment(row["created_at"]) or datetime.fromtimestamp(0, UTC),
        entities=tuple(key for key in row["entities"].split(_ENTITY_SEPARATOR) if key), scope=row["scope"],
    )
