"""The embedded `SearchIndex`: FTS5 for BM25, a numpy matrix for cosine, one SQLite file.

Vector search is an exact scan of the matrix (`vector_matrix.py`) below `ann_min_rows` rows; above it an HNSW graph
(`ann.py`) proposes candidates that are re-scored exactly from the matrix (selective filters keep the exact scan of
their rows). Keyword search (`keyword_search.py`) asks FTS5, or in-memory postings above `keyword_memory_min_rows`.
The file (`index_file.py`) keeps vectors and filter fields so a restart reloads the matrix without re-embedding; the
record store remains the source of truth (`zengram reindex` rebuilds this file from it).
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from zengram.adapters.sqlite.ann import HnswGraph, HnswParameters
from zengram.adapters.sqlite.fts_tables import read_meta
from zengram.adapters.sqlite.graph_file import save_graph, take_saved_graph
from zengram.adapters.sqlite.index_file import (
    DOCS,
    TOKENIZE,
    open_index_file,
    read_matrix,
    write_attributes,
    write_document,
    write_texts,
)
from zengram.adapters.sqlite.keyword_postings import BuiltPostings, FtsTokenizer, KeywordPostings, read_fts_postings
from zengram.adapters.sqlite.keyword_search import KeywordSearch
from zengram.adapters.sqlite.vector_matrix import VectorMatrix, best_hits, filter_mask, score_rows
from zengram.kernel.search import IndexAttributes, IndexDocument, IndexHit, SearchFilters
from zengram.kernel.text import search_terms

__all__ = ["TOKENIZE", "EmbeddedSearchIndex"]

logger = logging.getLogger(__name__)

# HNSW candidates asked per hit wanted (beyond the filters' share), and a floor for small k: measured on the 100k
# benchmark store, recall@10 gains nothing past these.
_ANN_OVERFETCH = 1.5
_ANN_EXTRA_CANDIDATES = 10


class EmbeddedSearchIndex:
    """k-NN over a numpy matrix (exact, or HNSW candidates re-scored exactly) and BM25 over FTS5, persisted in
    one SQLite file."""

    def __init__(self, path: Path, *, keyword_postings_budget: int = 20_000, ann_min_rows: int | None = None,
                 hnsw: HnswParameters | None = None, keyword_memory_min_rows: int | None = None) -> None:
        """`keyword_postings_budget`: how many (term, document) matches one keyword query may score; see
        `KeywordSearch.affordable_terms`. Small stores rarely reach it. `ann_min_rows`: from this many matrix rows
        on, an HNSW graph serves broad vector searches (0: always; None: never, every search is an exact scan).
        `keyword_memory_min_rows`: from this many rows on, keyword searches score in-memory postings
        (`keyword_postings.py`) instead of asking FTS5 (0: always; None: never); same hits, same scores."""
        _blas_on_one_thread()
        self._path = path
        self._saved_graph: Path | None = None  # a graph the last clean close saved for these rows (graph_file.py)
        self._db = open_index_file(path)
        self._fts = KeywordSearch(self._db, keyword_postings_budget)
        self._ann_min_rows = ann_min_rows
        self._hnsw = hnsw
        self._matrix: VectorMatrix | None = None
        self._graph: HnswGraph | None = None
        self._graph_lock = threading.Lock()
        self._keyword_memory_min_rows = keyword_memory_min_rows
        self._keywords: KeywordPostings | None = None
        self._tokenizer: FtsTokenizer | None = None
        self._load()

    def close(self) -> None:
        graph, matrix = self._graph, self._matrix
        if graph is not None and matrix is not None:
            try:
                save_graph(self._db, self._path, matrix, graph)  # the next open loads it instead of building it
            except Exception:  # derived state: the next open builds it again
                logger.exception("saving the HNSW vector graph failed; the next start builds it again")
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
        return read_meta(self._db.connection(), "model_id")

    @property
    def dimension(self) -> int | None:
        value = read_meta(self._db.connection(), "dimension")
        return int(value) if value is not None else None

    def bind_model(self, model_id: str, dimension: int) -> None:
        with self._db.transaction() as tx:
            DOCS.bind_model(tx, model_id, dimension)
        if self._matrix is None or self._matrix.dimension != dimension:
            self._drop_graph()
            self._drop_keywords()
            self._matrix = VectorMatrix(dimension)
            self._attach_graph_when_due()
            self._attach_keywords_when_due()

    # -- writes ---------------------------------------------------------------------------------------

    def upsert(self, documents: Sequence[IndexDocument], texts: dict[str, str] | None = None) -> None:
        """One transaction for the documents and `texts` (a write's new memory and its predecessor's new context:
        one commit and one FTS5 segment instead of two, #38)."""
        if not documents:
            self.set_texts(texts or {})
            return
        matrix = self._require_matrix(documents[0].vector.shape[-1])
        with self._db.transaction() as tx:
            fts_rowids = [write_document(tx, document) for document in documents]
            replaced = write_texts(tx, texts) if texts else {}
        self._fts.texts_changed()
        rows = [matrix.put(document.id, document.vector.astype(np.float32, copy=False), document.attributes, rowid)
                for document, rowid in zip(documents, fts_rowids, strict=True)]
        self._graph_follows(matrix, rows)
        self._keywords_follow(matrix, {**replaced, **{document.id: document.text for document in documents}})
        self._attach_graph_when_due()
        self._attach_keywords_when_due()

    def set_attributes(self, updates: dict[str, IndexAttributes]) -> None:
        if not updates:
            return
        with self._db.transaction() as tx:
            write_attributes(tx, updates)
        matrix = self._matrix
        if matrix is not None:
            self._graph_follows(matrix, [matrix.put(memory_id, None, attributes)
                                         for memory_id, attributes in updates.items()])

    def set_texts(self, texts: dict[str, str]) -> None:
        """Replaces the FTS5 text alone: the vector (and its matrix row) and the filter fields stay."""
        if not texts:
            return
        with self._db.transaction() as tx:
            replaced = write_texts(tx, texts)
        self._fts.texts_changed()
        matrix = self._matrix
        if matrix is not None:
            self._keywords_follow(matrix, replaced)

    def delete(self, memory_ids: Sequence[str]) -> None:
        with self._db.transaction() as tx:
            DOCS.delete(tx, memory_ids)
        self._fts.texts_changed()
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
        self._fts.texts_changed()
        self._drop_graph()
        self._drop_keywords()
        self._matrix = None

    # -- searches -------------------------------------------------------------------------------------

    def vector_search(self, vector: npt.NDArray[np.float32], filters: SearchFilters, k: int) -> list[IndexHit]:
        matrix = self._matrix
        if matrix is None or k <= 0:
            return []
        snap = matrix.snapshot()
        mask = filter_mask(matrix, snap, filters)
        if mask is None:
            return []
        kept = int(np.count_nonzero(mask))
        if kept == 0:
            return []
        query = np.asarray(vector, dtype=np.float32)
        selective = kept * 4 < mask.size
        candidates = None if selective else self._graph_candidates(query, mask, kept, k)
        rows, scores = score_rows(snap, mask, query, candidates, selective)
        return best_hits(matrix.ids, rows, scores, k)

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
        """The in-memory postings when built; else FTS5: ranked alone when unfiltered, among the rows a selective
        filter keeps, or joined to `docs` to filter."""
        terms = search_terms(text)
        if not terms or k <= 0:
            return []
        keywords, matrix = self._keywords, self._matrix
        if keywords is not None and keywords.ready.is_set() and matrix is not None:
            hits = self._fts.in_memory(keywords, matrix, terms, filters, k)
            if hits is not None:
                return hits
        match = self._fts.match(terms)
        if filters == SearchFilters():
            hits = self._rank_then_filter(match, k)
            if hits is not None:
                return hits
        selected = self._selected_documents(filters)
        if selected is not None:
            return self._fts.rank_among(match, selected, k)
        return self._fts.rank_filtered(match, filters, k)

    def _rank_then_filter(self, match: str, k: int) -> list[IndexHit] | None:
        return self._fts.rank_then_filter(match, k)

    def _selected_documents(self, filters: SearchFilters) -> npt.NDArray[np.int64] | None:
        """The `docs` rowids a selective filter keeps (under a quarter of the rows), from the matrix's filter mask;
        None when the filters keep many rows (or there is no matrix): then SQL filters the matches."""
        matrix = self._matrix
        if matrix is None:
            return None
        snap = matrix.snapshot()
        mask = filter_mask(matrix, snap, filters)
        if mask is None:
            return np.empty(0, dtype=np.int64)
        rows = np.flatnonzero(mask)
        return snap.fts_rowids[rows] if rows.size * 4 < mask.size else None

    def count(self) -> int:
        return int(self._db.connection().execute("SELECT COUNT(*) FROM docs").fetchone()[0])

    # -- the matrix and what is derived from it -------------------------------------------------------

    def _require_matrix(self, dimension: int) -> VectorMatrix:
        if self._matrix is None:
            raise RuntimeError("bind_model() must be called before the first upsert")
        if self._matrix.dimension != dimension:
            raise ValueError(f"vector has {dimension} dimensions; the index holds {self._matrix.dimension}")
        return self._matrix

    def _load(self) -> None:
        """Reads every stored vector into the matrix (a restart must not re-embed)."""
        dimension = self.dimension
        if dimension is None:
            return
        self._matrix = read_matrix(self._db, dimension)
        self._saved_graph = take_saved_graph(self._db, self._path, self._matrix)
        self._attach_graph_when_due()
        self._attach_keywords_when_due()

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
                saved, self._saved_graph = self._saved_graph, None  # only the first graph over the loaded matrix
                graph.start_build(matrix.graph_rows, background=matrix.snapshot().size > 0, saved=saved)
                self._graph = graph

    def _graph_follows(self, matrix: VectorMatrix, rows: Sequence[int | None]) -> None:
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

    def _keywords_follow(self, matrix: VectorMatrix, texts: dict[str, str]) -> None:
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


def _blas_on_one_thread() -> None:
    """Scoring rows is memory-bound: a second BLAS thread halves no wall time worth having and, on a 2-core host,
    spins against the query embedding and FTS5 threads (a 2k-row filtered scan measured 0.9 ms on one thread,
    3.6 ms on two under load). Process-wide, as the numpy embedder does."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
