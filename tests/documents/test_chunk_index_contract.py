"""The `ChunkIndex` contract on every adapter: the embedded index, and OpenSearch on a real engine (the session's
test node, tests/opensearch_node.py, or the cluster OPENSEARCH_URL names, with the variables of
tests/contract/backend_opensearch.py)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from zengram.adapters.sqlite.chunk_index import EmbeddedChunkIndex
from zengram.documents.domain.models import SourceType
from zengram.documents.ports import ChunkFilters, ChunkIndex, IndexedChunk


def unit(*values: float) -> Any:
    vector = np.zeros(4, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


@pytest.fixture(params=["embedded", "opensearch"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ChunkIndex]:
    if request.param == "embedded":
        built: Any = EmbeddedChunkIndex(tmp_path / "chunks.sqlite3")
    else:
        from zengram.adapters.opensearch import ClientOptions
        from zengram.adapters.opensearch.documents import OpenSearchChunkIndex

        from tests.opensearch_node import opensearch_url

        url = opensearch_url()

        options = ClientOptions(url, auth=os.environ.get("OPENSEARCH_AUTH", "none"),  # type: ignore[arg-type]
                                username=os.environ.get("OPENSEARCH_USERNAME"),
                                password=os.environ.get("OPENSEARCH_PASSWORD"))
        built = OpenSearchChunkIndex(options, alias=f"zengram-docs-contract-{uuid.uuid4().hex[:12]}",
                                     refresh="wait_for")
    built.bind_model("test:model", 4)
    yield built
    built.clear()
    built.close()


CHUNKS = [
    IndexedChunk("c1", "invoice totals are rounded to cents", unit(1, 0), "/p/docs/guide.md", SourceType.DOC,
                 "markdown"),
    IndexedChunk("c2", "def compute total invoice items", unit(0.9, 0.1), "/p/src/billing.py", SourceType.CODE,
                 "python"),
    IndexedChunk("c3", "shopping cart subtotal", unit(0, 1), "/p/web/cart.ts", SourceType.CODE, "typescript"),
    IndexedChunk("c4", "test invoice totals", unit(0.7, 0.7), "/p/tests/test_billing.py", SourceType.TEST, "python"),
]


def test_vector_search_ranks_by_cosine_and_filters(index: ChunkIndex) -> None:
    index.upsert(CHUNKS)
    assert index.model_id == "test:model" and index.count() == 4
    hits = index.vector_search(unit(1, 0), ChunkFilters(), 3)
    assert [hit.id for hit in hits] == ["c1", "c2", "c4"]
    assert hits[0].score == pytest.approx(1.0, abs=1e-4)
    code = index.vector_search(unit(1, 0), ChunkFilters(source_types=(SourceType.CODE,)), 5)
    assert [hit.id for hit in code] == ["c2", "c3"]
    typescript = index.vector_search(unit(1, 0), ChunkFilters(languages=("typescript",)), 5)
    assert [hit.id for hit in typescript] == ["c3"]
    paths = index.vector_search(unit(1, 0), ChunkFilters(file_paths=("src/*.py",)), 5)
    assert [hit.id for hit in paths] == ["c2"]


def test_keyword_search_is_bm25_with_the_same_filters(index: ChunkIndex) -> None:
    index.upsert(CHUNKS)
    hits = index.keyword_search("invoice totals", ChunkFilters(), 5)
    assert {hit.id for hit in hits} == {"c1", "c2", "c4"} and all(hit.score > 0 for hit in hits)
    assert [hit.id for hit in index.keyword_search("invoice", ChunkFilters(source_types=(SourceType.TEST,)), 5)] == [
        "c4"]
    assert [hit.id for hit in index.keyword_search("invoice", ChunkFilters(file_paths=("*.md",)), 5)] == ["c1"]
    assert index.keyword_search("zebra", ChunkFilters(), 5) == []


def test_upsert_replaces_and_delete_removes(index: ChunkIndex) -> None:
    index.upsert(CHUNKS)
    index.upsert([IndexedChunk("c1", "zebra crossing", unit(0, 1), "/p/docs/guide.md", SourceType.DOC, "markdown")])
    assert [hit.id for hit in index.keyword_search("zebra", ChunkFilters(), 5)] == ["c1"]
    assert index.keyword_search("rounded cents", ChunkFilters(), 5) == []
    assert index.count() == 4
    index.delete(["c1", "missing"])
    assert index.count() == 3
    assert "c1" not in {hit.id for hit in index.vector_search(unit(0, 1), ChunkFilters(), 5)}


def test_clear_forgets_everything_and_the_model(index: ChunkIndex) -> None:
    index.upsert(CHUNKS)
    index.clear()
    assert index.count() == 0 and index.model_id is None
    index.bind_model("other:model", 4)
    assert index.vector_search(unit(1), ChunkFilters(), 3) == []


def test_the_embedded_index_reloads_its_vectors(tmp_path: Path) -> None:
    first = EmbeddedChunkIndex(tmp_path / "chunks.sqlite3")
    first.bind_model("test:model", 4)
    first.upsert(CHUNKS)
    first.close()
    again = EmbeddedChunkIndex(tmp_path / "chunks.sqlite3")
    assert [hit.id for hit in again.vector_search(unit(0, 1), ChunkFilters(), 1)] == ["c3"]
    again.close()
