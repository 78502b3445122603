"""The embedded index's keyword search: BM25 over FTS5 (`docs_fts`), or over the in-memory postings
(`keyword_postings.py`) once they are built; same kept terms, same scores, ties by id either way."""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.adapters.sqlite.index_file import entity_text
from zengram.adapters.sqlite.keyword_postings import KeywordPostings, PostingsView
from zengram.adapters.sqlite.vector_matrix import CATEGORICAL_FIELDS, VectorMatrix, filter_mask
from zengram.kernel.search import MEMORY_SCOPE, IndexHit, SearchFilters

_TERM_COUNTS_KEPT = 50_000  # query terms whose document counts are remembered (a few MB at most)
_RANKED = "SELECT docs.id AS id, -bm25(docs_fts) AS score FROM docs_fts JOIN docs ON docs.rowid = docs_fts.rowid "


class KeywordSearch:
    """Ranks keyword matches; keeps each term's document count until the texts change (`texts_changed`)."""

    def __init__(self, db: SQLiteDatabase, postings_budget: int) -> None:
        self._db = db
        self._postings_budget = postings_budget
        # Documents per query term, valid until the next change of the FTS5 texts (see `term_frequencies`).
        self._term_counts: dict[str, int] = {}
        self._texts_generation = 0

    def texts_changed(self) -> None:
        self._texts_generation += 1
        self._term_counts = {}

    def match(self, terms: list[str]) -> str:
        """The FTS5 query of the terms the budget affords."""
        return " OR ".join(f'"{term}"' for term in self.affordable_terms(terms, self.term_frequencies))

    def affordable_terms(self, terms: list[str], frequencies: Callable[[list[str]], dict[str, int]]) -> list[str]:
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

    def term_frequencies(self, terms: list[str]) -> dict[str, int]:
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

    def rank_then_filter(self, match: str, k: int) -> list[IndexHit] | None:
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

    def rank_among(self, match: str, rowids: npt.NDArray[np.int64], k: int) -> list[IndexHit]:
        """BM25 ranking of the matches among `rowids` only. Checking each match's rowid against that list (the
        unary `+` keeps it a filter, not a per-rowid FTS5 lookup) before joining `docs` spares reading the
        `docs` row (its vector overflows the page) of every match the filter drops: 3 ms instead of 14 ms for
        one client among 50 at 100k documents."""
        if rowids.size == 0:
            return []
        rows = self._db.connection().execute(
            f"{_RANKED}WHERE docs_fts MATCH ? AND +docs_fts.rowid IN (SELECT value FROM json_each(?)) "
            "ORDER BY bm25(docs_fts), docs.id LIMIT ?",
            [match, json.dumps(rowids.tolist()), k],
        ).fetchall()
        return [IndexHit(id=row["id"], score=float(row["score"])) for row in rows]

    def rank_filtered(self, match: str, filters: SearchFilters, k: int) -> list[IndexHit]:
        """BM25 ranking of the matches that pass `filters`, SQL joining `docs` to filter."""
        clauses, params = sql_filters(filters)
        where = "".join(f" AND {clause}" for clause in clauses)
        rows = self._db.connection().execute(
            f"{_RANKED}WHERE docs_fts MATCH ?{where} ORDER BY bm25(docs_fts), docs.id LIMIT ?",
            [match, *params, k],
        ).fetchall()
        return [IndexHit(id=row["id"], score=float(row["score"])) for row in rows]

    def in_memory(self, keywords: KeywordPostings, matrix: VectorMatrix, terms: list[str], filters: SearchFilters,
                  k: int) -> list[IndexHit] | None:
        """The FTS5 query's answer — same kept terms, same scores, ties by id — from the in-memory postings and
        the matrix's filter mask; None when a word is not one FTS5 token (FTS5 reads it as a phrase) or the
        postings went out of use."""
        tokens = keywords.tokenizer.tokens_of_words(terms)
        if any(len(tokens[term]) != 1 for term in terms):
            return None
        token_of = {term: tokens[term][0] for term in terms}
        view = keywords.view(token_of.values())
        if view is None:
            return None
        kept = self.affordable_terms(terms, lambda asked: _document_counts(view, token_of, asked))
        snap = matrix.snapshot()
        mask = filter_mask(matrix, snap, filters)
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


def _document_counts(view: PostingsView, token_of: dict[str, str], terms: list[str]) -> dict[str, int]:
    return {term: view.document_count(token_of[term]) for term in terms}


def sql_filters(filters: SearchFilters) -> tuple[list[str], list[object]]:
    """`filters` as SQL conditions on `docs` (to join with `AND`) and their parameters."""
    clauses: list[str] = []
    params: list[object] = []
    if not (filters.include_inactive or filters.at_time):
        clauses.append("docs.active = 1")
    _field_filters(filters, clauses, params)
    _time_filters(filters, clauses, params)
    if filters.entity is not None:
        clauses.append("instr(docs.entities, ?) > 0")
        params.append(entity_text([filters.entity]))
    return clauses, params


def _field_filters(filters: SearchFilters, clauses: list[str], params: list[object]) -> None:
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


def _time_filters(filters: SearchFilters, clauses: list[str], params: list[object]) -> None:
    if filters.at_time is not None:
        clauses.append("docs.valid_from <= ? AND (docs.valid_to IS NULL OR docs.valid_to > ?)")
        params += [filters.at_time.timestamp()] * 2
    if filters.date_from is not None:
        clauses.append("docs.valid_from >= ?")
        params.append(filters.date_from.timestamp())
    if filters.date_to is not None:
        clauses.append("docs.valid_from <= ?")
        params.append(filters.date_to.timestamp())
