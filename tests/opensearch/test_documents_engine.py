"""The documents' OpenSearch `ChunkIndex` against a real engine (the session's test node): what the engine keeps of
the documents mapping, chunks stored under their chunk ids, k-NN with its filters applied during the search, path
globs that select what the embedded index selects, a deleted index recreated on write, and real faults.

The port's contract runs on this engine too (tests/documents/test_chunk_index_contract.py); faults the engine
cannot produce on demand (429, 503) stay in tests/documents/test_opensearch_chunk_index.py.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from zengram.adapters.opensearch import BulkWriteError, ClientOptions, RetryPolicy
from zengram.adapters.opensearch.documents import OpenSearchChunkIndex
from zengram.adapters.sqlite.chunk_index import EmbeddedChunkIndex
from zengram.documents.domain.models import SourceType
from zengram.documents.ports import ChunkFilters, IndexedChunk
from zengram.kernel.errors import IndexRejected, IndexUnavailable

MODEL = "test:model"
MAPPING_FILE = Path(__file__).resolve().parents[2] / "shared/zengram/adapters/opensearch/mappings/documents.v1.json"


def unit(*values: float) -> npt.NDArray[np.float32]:
    vector = np.zeros(4, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


def chunk(chunk_id: str, text: str = "invoice totals", vector: npt.NDArray[np.float32] | None = None,
          source: str = "/p/docs/guide.md", source_type: SourceType = SourceType.DOC,
          language: str | None = "markdown") -> IndexedChunk:
    return IndexedChunk(chunk_id, text, unit(1, 0) if vector is None else vector, source, source_type, language)


def concrete(alias: str) -> str:
    return f"{alias}-v1-4d"


def ids(hits: list[Any]) -> list[str]:
    return [hit.id for hit in hits]


@pytest.fixture
def make_chunk_index(url: str, alias: str) -> Iterator[Any]:
    built: list[OpenSearchChunkIndex] = []

    def make(**options: Any) -> OpenSearchChunkIndex:
        index = OpenSearchChunkIndex(ClientOptions(url), **{"alias": alias, "refresh": "wait_for",
                                                             "retry": RetryPolicy(base_delay=0.0), **options})
        built.append(index)
        return index

    yield make
    for index in built:
        index.close()


@pytest.fixture
def index(make_chunk_index: Any) -> OpenSearchChunkIndex:
    built: OpenSearchChunkIndex = make_chunk_index()
    built.bind_model(MODEL, 4)
    return built


# -- what the engine keeps ---------------------------------------------------------------------------------------

def test_the_engine_holds_the_documents_mapping_as_written(engine: Any, alias: str,
                                                           index: OpenSearchChunkIndex) -> None:
    template = json.loads(MAPPING_FILE.read_text())
    expected = copy.deepcopy(template["mappings"])
    expected["properties"]["vector"]["dimension"] = 4
    expected["_meta"] = {"mapping_version": 1, "model_id": MODEL, "dimension": 4}

    assert engine.indices.get_mapping(index=alias) == {concrete(alias): {"mappings": expected}}
    settings = engine.indices.get_settings(index=alias)[concrete(alias)]["settings"]["index"]
    assert settings["knn"] == "true" and settings["analysis"] == template["settings"]["analysis"]
    assert engine.indices.get_alias(name=alias) == {concrete(alias): {"aliases": {alias: {}}}}
    assert index.model_id == MODEL


def test_chunks_are_stored_under_their_chunk_ids_as_sent(engine: Any, alias: str,
                                                          index: OpenSearchChunkIndex) -> None:
    index.upsert([chunk("chunk_b", "def total(items)", unit(0, 1), "/p/src/billing.py", SourceType.CODE, "python")])
    stored = engine.get(index=alias, id="chunk_b")["_source"]
    assert stored.pop("vector") == pytest.approx([0.0, 1.0, 0.0, 0.0])
    assert stored == {"id": "chunk_b", "text": "def total(items)", "source": "/p/src/billing.py",
                      "source_type": "code", "language": "python"}
    index.upsert([chunk("chunk_b", "def subtotal(items)", unit(0, 1), "/p/src/billing.py", SourceType.CODE,
                        "python")])
    assert index.count() == 1 and engine.get(index=alias, id="chunk_b")["_source"]["text"] == "def subtotal(items)"


def test_a_chunk_without_a_language_is_stored_without_one(index: OpenSearchChunkIndex) -> None:
    index.upsert([chunk("plain", "release notes", source="/p/notes.txt", language=None)])
    assert ids(index.keyword_search("release", ChunkFilters(), 5)) == ["plain"]
    assert index.keyword_search("release", ChunkFilters(languages=("markdown",)), 5) == []


# -- k-NN, BM25 and filters --------------------------------------------------------------------------------------

def test_the_knn_filter_is_applied_during_the_search_not_after(index: OpenSearchChunkIndex) -> None:
    # The nearest 30 chunks are documentation; filtering k=2 results afterwards would leave no code at all.
    index.upsert([chunk(f"doc-{n:02}", vector=unit(1, n / 100)) for n in range(30)])
    index.upsert([chunk("code-1", vector=unit(-1, 0.1), source="/p/src/a.py", source_type=SourceType.CODE,
                        language="python"),
                  chunk("code-2", vector=unit(-1, 0.2), source="/p/src/b.py", source_type=SourceType.CODE,
                        language="python")])

    hits = index.vector_search(unit(1, 0), ChunkFilters(source_types=(SourceType.CODE,)), 2)
    assert ids(hits) == ["code-2", "code-1"]  # the less opposite one first
    assert hits[0].score == pytest.approx(float(unit(-1, 0.2) @ unit(1, 0)), abs=1e-5)


SOURCES = ["/p/docs/guide.md", "/p/docs/api/routes.md", "/p/README.md", "/p/src/billing.py", "/p/src/io/files.py",
           "/p/web/cart.ts", "/p/tests/test_billing.py", "/p/src/Billing_v2.py"]
GLOBS = ["*.md", "docs/*.md", "docs/**/*.md", "src/**/*.py", "**/tests/**", "src/*.py", "*.py", "billing.py",
         "web/cart.ts", "cart.?s", "src/billing*", "README.md", "p/src/**", "*illing*.py", "nothing/*.md"]


@pytest.mark.parametrize("pattern", GLOBS)
def test_path_globs_select_what_the_embedded_index_selects(index: OpenSearchChunkIndex, tmp_path: Path,
                                                           pattern: str) -> None:
    chunks = [chunk(f"c{n}", "shared words", unit(1, n / 10), source) for n, source in enumerate(SOURCES)]
    embedded = EmbeddedChunkIndex(tmp_path / "chunks.sqlite3")
    try:
        embedded.bind_model(MODEL, 4)
        for built in (index, embedded):
            built.upsert(chunks)
        filters = ChunkFilters(file_paths=(pattern,))
        expected = set(ids(embedded.vector_search(unit(1, 0), filters, 20)))
        assert set(ids(index.vector_search(unit(1, 0), filters, 20))) == expected
        assert set(ids(index.keyword_search("shared words", filters, 20))) == expected
    finally:
        embedded.close()


def test_keyword_search_stems_and_folds_like_the_memories_index(index: OpenSearchChunkIndex) -> None:
    index.upsert([chunk("a", "The café's invoices were rounded"), chunk("b", "shopping cart")])
    assert ids(index.keyword_search("cafe invoice rounding", ChunkFilters(), 5)) == ["a"]
    assert index.keyword_search("the of and", ChunkFilters(), 5) == []  # stop words only: no match, no error


# -- the index itself --------------------------------------------------------------------------------------------

def test_searching_before_any_index_exists_finds_nothing(make_chunk_index: Any) -> None:
    index = make_chunk_index()
    assert index.vector_search(unit(1), ChunkFilters(), 5) == []
    assert index.keyword_search("invoice", ChunkFilters(), 5) == []
    assert (index.count(), index.model_id) == (0, None)


def test_a_write_into_a_deleted_index_recreates_it(engine: Any, alias: str, index: OpenSearchChunkIndex) -> None:
    index.upsert([chunk("a")])
    engine.indices.delete(index=concrete(alias))

    index.upsert([chunk("b")])
    assert engine.indices.get_alias(name=alias) == {concrete(alias): {"aliases": {alias: {}}}}
    assert ids(index.keyword_search("invoice", ChunkFilters(), 5)) == ["b"]


def test_rebinding_another_model_records_it_and_another_dimension_is_refused(
        engine: Any, alias: str, index: OpenSearchChunkIndex) -> None:
    index.bind_model("other:model", 4)
    assert engine.indices.get_mapping(index=alias)[concrete(alias)]["mappings"]["_meta"]["model_id"] == "other:model"
    with pytest.raises(ValueError, match="4-dimensional"):
        index.bind_model("wide:model", 8)


def test_clear_drops_the_index_and_the_alias(engine: Any, alias: str, index: OpenSearchChunkIndex) -> None:
    index.upsert([chunk("a")])
    index.clear()
    assert not engine.indices.exists_alias(name=alias)
    assert (index.count(), index.model_id) == (0, None)
    index.clear()  # nothing left to clear: still fine


def test_a_chunk_the_engine_refuses_is_named_and_the_others_written(index: OpenSearchChunkIndex) -> None:
    wrong_dimension = np.ones(3, dtype=np.float32) / np.sqrt(3)
    with pytest.raises(BulkWriteError, match="bad: 400 mapper_parsing_exception") as raised:
        index.upsert([chunk("a"), chunk("bad", vector=wrong_dimension), chunk("c")])
    assert raised.value.failed_ids == ["bad"]
    assert sorted(ids(index.keyword_search("invoice", ChunkFilters(), 5))) == ["a", "c"]


def test_a_closed_index_is_an_index_unavailable_error(engine: Any, alias: str, index: OpenSearchChunkIndex) -> None:
    index.upsert([chunk("a")])
    engine.indices.close(index=concrete(alias))
    try:
        for attempt in (lambda: index.keyword_search("invoice", ChunkFilters(), 5),
                        lambda: index.vector_search(unit(1), ChunkFilters(), 5), index.count):
            with pytest.raises(IndexUnavailable, match="index_closed_exception"):
                attempt()
        with pytest.raises(BulkWriteError, match="a: 400 index_closed_exception"):
            index.upsert([chunk("a")])
    finally:
        engine.indices.open(index=concrete(alias), wait_for_active_shards=1)
    assert index.count() == 1


def test_a_query_the_engine_refuses_is_an_index_rejected_error(index: OpenSearchChunkIndex) -> None:
    index.upsert([chunk("a")])
    with pytest.raises(IndexRejected):
        index.vector_search(np.ones(3, dtype=np.float32), ChunkFilters(), 5)  # the wrong dimension: a 400


# -- the whole service on the engine -------------------------------------------------------------------------------

def test_the_service_indexes_and_answers_on_the_engine_as_on_the_embedded_index(url: str, alias: str,
                                                                               tmp_path: Path) -> None:
    """The kb sample indexed twice, chunks in OpenSearch and in the embedded index: every mode finds the same files
    (same embedder, same BM25 analyzers' intent), and a reset leaves no index behind."""
    import shutil

    from zengram.documents.domain.models import IndexJobStatus, IndexOperation, IndexOptions
    from zengram.documents.domain.query import DocumentQuery, QueryMode

    from tests.documents.backends import documents_container
    from tests.support import REPO_ROOT, HashingEmbedder

    folder = tmp_path / "project" / "sample"
    shutil.copytree(REPO_ROOT / "tests" / "data" / "kb_sample", folder)
    engine_options = {"search_index": "opensearch", "opensearch_url": url, "documents_opensearch_alias": alias,
                      "opensearch_refresh": "wait_for", "opensearch_retry_delay": 0.0}
    answers: dict[str, dict[str, set[str]]] = {}
    for name, options in (("opensearch", engine_options), ("embedded", {})):
        with documents_container("sqlite", tmp_path / name, [folder.parent], HashingEmbedder(), **options) as kb:
            queued = kb.indexing.enqueue(str(folder), IndexOperation.INDEX, IndexOptions(include_code=True))
            assert kb.launcher.wait_idle(60)  # type: ignore[attr-defined]
            job = kb.indexing.job(queued.job.id)
            assert job.status is IndexJobStatus.DONE, job.error
            assert kb.queries.status().counts.chunks == job.total_chunks
            answers[name] = {
                mode.value: {Path(result.source).name for result in kb.queries.query(DocumentQuery(
                    query="compute_total invoice refund", mode=mode, similarity_threshold=0.0, top_k=50)).results}
                for mode in QueryMode}
            if name == "opensearch":
                kb.indexing.reset()
                assert not kb.queries.is_ready() and kb.queries.status().counts.chunks == 0
    assert answers["opensearch"] == answers["embedded"]
    assert all(answers["opensearch"].values())
