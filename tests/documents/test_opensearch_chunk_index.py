"""The documents' OpenSearch `ChunkIndex` where a fault must be injected or a request seen: the real adapter and
opensearch-py against the recording fake (tests/opensearch_fake.py). What only this shows: the exact create, bulk
and search bodies (filters inside the k-NN clause), and retries on 429. Everything else runs against a real
engine: tests/opensearch/test_documents_engine.py and the contract suite (test_chunk_index_contract.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from zengram.adapters.opensearch import ClientOptions, RetryPolicy
from zengram.adapters.opensearch.documents import OpenSearchChunkIndex
from zengram.documents.domain.models import SourceType
from zengram.documents.ports import ChunkFilters, IndexedChunk

from tests.opensearch_fake import FakeOpenSearch, iter_bulk, rejected

ALIAS = "zengram-documents-test"
CONCRETE = f"{ALIAS}-v1-4d"
MAPPING = Path(__file__).resolve().parents[2] / "shared/zengram/adapters/opensearch/mappings/documents.v1.json"


def unit(*values: float) -> Any:
    vector = np.zeros(4, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


def chunk(chunk_id: str, source: str = "/docs/a.md", **fields: Any) -> IndexedChunk:
    values: dict[str, Any] = {"text": "invoice total", "vector": unit(1, 0), "source": source,
                              "source_type": SourceType.DOC, "language": "markdown"}
    return IndexedChunk(id=chunk_id, **{**values, **fields})


@pytest.fixture
def fake() -> Iterator[FakeOpenSearch]:
    with FakeOpenSearch() as server:
        yield server


@pytest.fixture
def index(fake: FakeOpenSearch) -> Iterator[OpenSearchChunkIndex]:
    built = OpenSearchChunkIndex(ClientOptions(fake.url), alias=ALIAS, refresh="wait_for",
                                 retry=RetryPolicy(base_delay=0.0))
    built.bind_model("test:hashing", 4)
    fake.requests.clear()
    yield built
    built.close()


def test_binding_creates_the_documents_index_behind_its_alias(fake: FakeOpenSearch) -> None:
    OpenSearchChunkIndex(ClientOptions(fake.url), alias=ALIAS).bind_model("test:hashing", 4)
    body = fake.requests_to("PUT", f"^/{CONCRETE}$")[0].json()
    assert body["aliases"] == {ALIAS: {}}
    fields = body["mappings"]["properties"]
    assert fields["vector"]["dimension"] == 4 and fields["vector"]["method"]["space_type"] == "cosinesimil"
    assert {name: fields[name]["type"] for name in ("id", "source", "source_type", "language")} == dict.fromkeys(
        ("id", "source", "source_type", "language"), "keyword")
    assert body["mappings"]["_meta"] == {"mapping_version": 1, "model_id": "test:hashing", "dimension": 4}
    assert json.loads(MAPPING.read_text())["mappings"]["properties"]["vector"]["dimension"] is None


def test_upsert_and_delete_are_bulk_requests_keyed_by_chunk_id(fake: FakeOpenSearch,
                                                               index: OpenSearchChunkIndex) -> None:
    index.upsert([chunk("chunk_1"), chunk("chunk_2", source="/src/b.py", source_type=SourceType.CODE,
                                         language="python")])
    request = fake.requests_to("POST", "_bulk")[0]
    assert request.query == {"refresh": "wait_for", "require_alias": "true"}
    actions = list(iter_bulk(request))
    assert [(kind, header["_id"]) for kind, header, _ in actions] == [("index", "chunk_1"), ("index", "chunk_2")]
    source = actions[1][2]
    assert source is not None
    assert {key: source[key] for key in ("id", "source", "source_type", "language", "text")} == {
        "id": "chunk_2", "source": "/src/b.py", "source_type": "code", "language": "python", "text": "invoice total"}
    assert len(source["vector"]) == 4
    assert index.count() == 2
    index.delete(["chunk_1", "chunk_1"])
    deletes = list(iter_bulk(fake.requests_to("POST", "_bulk")[-1]))
    assert [(kind, header["_id"]) for kind, header, _ in deletes] == [("delete", "chunk_1")]
    assert index.count() == 1


def test_searches_put_every_filter_inside_the_query(fake: FakeOpenSearch, index: OpenSearchChunkIndex) -> None:
    filters = ChunkFilters(source_types=(SourceType.CODE,), languages=("python", "go"), file_paths=("src/*.py",))
    fake.search_hits = [("chunk_a", 0.9), ("chunk_b", 0.75)]
    hits = index.vector_search(unit(1, 0), filters, 5)
    assert [(hit.id, round(hit.score, 6)) for hit in hits] == [("chunk_a", 0.8), ("chunk_b", 0.5)]  # 2s - 1
    knn = fake.requests_to("POST", "_search")[0].json()["query"]["knn"]["vector"]
    assert knn["k"] == 5 and len(knn["vector"]) == 4
    assert knn["filter"] == {"bool": {"filter": [
        {"terms": {"source_type": ["code"]}}, {"terms": {"language": ["python", "go"]}},
        {"bool": {"should": [{"wildcard": {"source": {"value": "src/*.py"}}},
                             {"wildcard": {"source": {"value": "*/src/*.py"}}}], "minimum_should_match": 1}}]}}

    fake.search_hits = [("chunk_a", 7.5)]
    assert [(hit.id, hit.score) for hit in index.keyword_search("invoice totals", ChunkFilters(), 3)] == [
        ("chunk_a", 7.5)]
    body = fake.requests_to("POST", "_search")[-1].json()
    assert body["query"] == {"bool": {"must": [{"match": {"text": {"query": "invoice totals"}}}]}}
    assert body["size"] == 3 and body["_source"] == ["id"]
    fake.requests.clear()
    assert index.keyword_search("?! --", ChunkFilters(), 3) == [] and not fake.requests  # no words: no request


def test_a_rejected_bulk_item_is_retried(fake: FakeOpenSearch, index: OpenSearchChunkIndex) -> None:
    fake.fail_item("chunk_1", (429, "es_rejected_execution_exception"))
    index.upsert([chunk("chunk_1")])
    assert len(fake.requests_to("POST", "_bulk")) == 2 and index.count() == 1


def test_a_whole_request_failing_is_retried(fake: FakeOpenSearch, index: OpenSearchChunkIndex) -> None:
    fake.script("POST", "_search", (429, rejected()))
    fake.search_hits = [("chunk_a", 1.0)]
    assert [hit.id for hit in index.vector_search(unit(1), ChunkFilters(), 1)] == ["chunk_a"]


def test_serverless_collections_are_refused() -> None:
    with pytest.raises(ValueError, match="Serverless"):
        OpenSearchChunkIndex(ClientOptions("https://example.invalid", aws_service="aoss"))
