"""What only the embedded index must do: survive a restart without re-embedding, grow past its buffer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from zengram.adapters.sqlite import EmbeddedSearchIndex
from zengram.domain.search import SearchFilters

from tests.contract.test_search_index import EMBEDDER, document


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
