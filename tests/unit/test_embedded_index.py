"""What only the embedded index must do: survive a restart without re-embedding, grow past its buffer."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from zengram.adapters.sqlite import EmbeddedSearchIndex
from zengram.kernel.search import SearchFilters

from tests.contract.test_search_index import EMBEDDER, T0, document


def test_reopened_index_serves_the_same_vectors(tmp_path: Path) -> None:
    index = EmbeddedSearchIndex(tmp_path / "index.sqlite3")
    index.bind_model(EMBEDDER.model_id, EMBEDDER.dimension)
    index.upsert([document("a", "coffee machine broken"), document("b", "tea order placed", client_id="globex")])
    query = EMBEDDER.embed(["coffee"])[0]
    before = index.vector_search(query, SearchFilters(), k=5)
    index.close()

    reopened = EmbeddedSearchIndex(tmp_path / "index.sqlite3")
    assert reopened.model_id == EMBEDDER.model_id
    assert reopened.vector_search(query, SearchFilters(), k=5) == before
    assert [hit.id for hit in reopened.vector_search(query, SearchFilters(client_id="globex"), k=5)] == ["b"]


def test_matrix_grows_beyond_its_initial_capacity(tmp_path: Path) -> None:
    index = EmbeddedSearchIndex(tmp_path / "index.sqlite3")
    index.bind_model(EMBEDDER.model_id, EMBEDDER.dimension)
    vectors = np.random.default_rng(7).normal(size=(2500, EMBEDDER.dimension)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index.upsert([document(f"d{i:04}", f"note {i}", vectors[i]) for i in range(2500)])
    assert index.count() == 2500
    for probe in (0, 1023, 1024, 2499):
        assert index.vector_search(vectors[probe], SearchFilters(), k=1)[0].id == f"d{probe:04}"


def test_keyword_queries_leave_out_the_most_frequent_words_once_the_budget_is_spent(tmp_path: Path) -> None:
    index = EmbeddedSearchIndex(tmp_path / "index.sqlite3", keyword_postings_budget=30)
    index.bind_model(EMBEDDER.model_id, EMBEDDER.dimension)
    index.upsert([document(f"common{i}", f"weekly status update number {i}") for i in range(40)]
                 + [document("rare", "weekly kubernetes upgrade")])
    # "weekly" matches 41 documents: over the budget of 30, so only "kubernetes" is scored.
    hits = index.keyword_search("weekly kubernetes", SearchFilters(), k=10)
    assert [hit.id for hit in hits] == ["rare"]

    generous = EmbeddedSearchIndex(tmp_path / "index.sqlite3")  # default budget: both words count
    assert len(generous.keyword_search("weekly kubernetes", SearchFilters(), k=50)) == 41


def test_selective_keyword_filters_rank_as_the_sql_filters_do(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A selective filter takes its rows from the matrix's mask instead of SQL: same hits, same order."""
    rng = np.random.default_rng(11)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    index = EmbeddedSearchIndex(tmp_path / "index.sqlite3")
    index.bind_model(EMBEDDER.model_id, EMBEDDER.dimension)
    index.upsert([document(f"d{i:03}", " ".join(rng.choice(words, size=5)), client_id=f"client{i % 12}",
                           type="fact" if i % 3 else "event", active=i % 7 != 0,
                           valid_from=T0 + timedelta(days=i % 30)) for i in range(360)])
    index.delete(["d001", "d013"])
    filter_sets = [
        SearchFilters(client_id="client1"), SearchFilters(client_id="client2", type="fact"),
        SearchFilters(client_ids=["client3", "client4"]), SearchFilters(client_id="client5", include_inactive=True),
        SearchFilters(client_id="client6", at_time=T0 + timedelta(days=10)),
        SearchFilters(client_id="client7", date_from=T0 + timedelta(days=5), date_to=T0 + timedelta(days=20)),
        SearchFilters(client_id="nobody"), SearchFilters(type="fact"),
    ]
    fast = [index.keyword_search("alpha echo golf", filters, k=15) for filters in filter_sets]
    monkeypatch.setattr(EmbeddedSearchIndex, "_selected_documents", lambda self, filters: None)
    assert fast == [index.keyword_search("alpha echo golf", filters, k=15) for filters in filter_sets]
    assert all(fast[:-2]) and fast[-2] == []


def test_term_counts_kept_between_queries_follow_every_write(tmp_path: Path) -> None:
    index = EmbeddedSearchIndex(tmp_path / "index.sqlite3", keyword_postings_budget=30)
    index.bind_model(EMBEDDER.model_id, EMBEDDER.dimension)
    index.upsert([document(f"common{i}", f"weekly status update number {i}") for i in range(20)]
                 + [document("rare", "weekly kubernetes upgrade")])
    assert len(index.keyword_search("weekly kubernetes", SearchFilters(), k=50)) == 21  # 21 + 1 fit in 30
    index.upsert([document(f"more{i}", f"weekly status update number {i}") for i in range(20)])
    assert [hit.id for hit in index.keyword_search("weekly kubernetes", SearchFilters(), k=50)] == ["rare"]
    index.delete([f"more{i}" for i in range(20)])
    assert len(index.keyword_search("weekly kubernetes", SearchFilters(), k=50)) == 21
    index.set_texts({f"common{i}": "monthly report" for i in range(20)})
    assert len(index.keyword_search("weekly kubernetes", SearchFilters(), k=50)) == 1


def test_the_keyword_index_merges_its_segments_sixteen_at_a_time_in_new_and_old_files(tmp_path: Path) -> None:
    """FTS5's default (4) makes a commit's merge work grow with the index; the setting lives in the file."""
    import sqlite3

    from zengram.adapters.sqlite.fts_tables import SEGMENTS_MERGED_AT

    def automerge(path: Path) -> int | None:
        with sqlite3.connect(path) as connection:
            row = connection.execute("SELECT v FROM docs_fts_config WHERE k = 'automerge'").fetchone()
        return None if row is None else int(row[0])

    EmbeddedSearchIndex(tmp_path / "new.sqlite3").close()
    assert automerge(tmp_path / "new.sqlite3") == SEGMENTS_MERGED_AT == 16

    old = tmp_path / "old.sqlite3"
    with sqlite3.connect(old) as connection:  # a file written before the setting: FTS5's default
        connection.execute("CREATE VIRTUAL TABLE docs_fts USING fts5(text)")
        connection.execute("INSERT INTO docs_fts (docs_fts, rank) VALUES ('automerge', 4)")
    assert automerge(old) == 4
    index = EmbeddedSearchIndex(old)
    index.bind_model(EMBEDDER.model_id, EMBEDDER.dimension)
    index.upsert([document("a", "coffee machine broken")])
    index.close()
    assert automerge(old) == SEGMENTS_MERGED_AT
