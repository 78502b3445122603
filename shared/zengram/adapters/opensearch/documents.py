"""The `ChunkIndex` port on OpenSearch: k-NN (HNSW, cosine) and BM25 over the chunks, in an index of their own
behind the alias `zengram-documents` (`mappings/documents.v1.json`), beside the memories' index.

Writes and reads go through the alias to a versioned concrete index (`zengram-documents-v1-384d`); a chunk's `_id`
is its chunk id, so re-indexing overwrites. Filters (source type, language, path globs) apply inside the index on
both paths. OpenSearch Serverless is not supported here (it assigns document ids itself): use a domain.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from zengram.adapters.opensearch.aliased_index import AliasedIndex
from zengram.adapters.opensearch.bulk import BulkAction, BulkWriteError
from zengram.adapters.opensearch.client import ClientOptions, RetryPolicy, build_client
from zengram.adapters.opensearch.mapping import Binding, binding_from_mapping
from zengram.adapters.opensearch.queries import MAX_QUERY_CHARS, lucene_cosine, vector_values
from zengram.documents.ports import ChunkFilters, ChunkHit, IndexedChunk
from zengram.kernel.text import search_terms

logger = logging.getLogger(__name__)
MAPPING_VERSION = 1
_SOURCE = ["id"]
_ORDER = [{"_score": {"order": "desc"}}, {"id": {"order": "asc"}}]


@cache
def _template() -> dict[str, Any]:
    text = resources.files(__package__).joinpath(f"mappings/documents.v{MAPPING_VERSION}.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def concrete_index_name(alias: str, dimension: int) -> str:
    return f"{alias}-v{MAPPING_VERSION}-{dimension}d"


def index_body(alias: str, binding: Binding) -> dict[str, Any]:
    body = copy.deepcopy(_template())
    body["mappings"]["_meta"] = _meta(binding)
    body["mappings"]["properties"]["vector"]["dimension"] = binding.dimension
    body["aliases"] = {alias: {}}
    return body


def _meta(binding: Binding) -> dict[str, Any]:
    return {"mapping_version": MAPPING_VERSION, "model_id": binding.model_id, "dimension": binding.dimension}


def filter_clauses(filters: ChunkFilters) -> list[dict[str, Any]]:
    clauses: list[dict[str, Any]] = []
    if filters.source_types:
        clauses.append({"terms": {"source_type": [value.value for value in filters.source_types]}})
    if filters.languages:
        clauses.append({"terms": {"language": list(filters.languages)}})
    if filters.file_paths:
        globs = []
        for pattern in filters.file_paths:
            pattern = pattern.replace("**/", "*/").replace("/**", "/*")
            globs += [{"wildcard": {"source": {"value": value}}} for value in dict.fromkeys((pattern, f"*/{pattern}"))]
        clauses.append({"bool": {"should": globs, "minimum_should_match": 1}})
    return clauses


def knn_query(vector: npt.NDArray[np.floating[Any]], filters: ChunkFilters, k: int) -> dict[str, Any]:
    knn: dict[str, Any] = {"vector": vector_values(vector), "k": k}
    clauses = filter_clauses(filters)
    if clauses:
        knn["filter"] = {"bool": {"filter": clauses}}
    return {"size": k, "_source": _SOURCE, "query": {"knn": {"vector": knn}}, "sort": _ORDER, "track_scores": True}


def bm25_query(text: str, filters: ChunkFilters, k: int) -> dict[str, Any]:
    query: dict[str, Any] = {"must": [{"match": {"text": {"query": text[:MAX_QUERY_CHARS]}}}]}
    clauses = filter_clauses(filters)
    if clauses:
        query["filter"] = clauses
    return {"size": k, "_source": _SOURCE, "query": {"bool": query}, "sort": _ORDER, "track_scores": True}


def parse_hits(response: dict[str, Any], k: int, *, cosine: bool) -> list[ChunkHit]:
    hits = []
    for hit in response.get("hits", {}).get("hits", []):
        score = float(hit.get("_score") if hit.get("_score") is not None else (hit.get("sort") or [0.0])[0])
        hits.append(ChunkHit(str((hit.get("_source") or {}).get("id", hit.get("_id"))),
                             lucene_cosine(score) if cosine else score))
    return sorted(hits, key=lambda hit: (-hit.score, hit.id))[:k]


class OpenSearchChunkIndex(AliasedIndex):
    def __init__(self, options: ClientOptions, *, alias: str = "zengram-documents", refresh: str = "false",
                 retry: RetryPolicy | None = None, client: Any | None = None) -> None:
        if options.aws_service == "aoss":
            raise ValueError("the document index needs an OpenSearch domain: Serverless collections assign document "
                             "ids themselves, and chunk ids must be the document ids")
        super().__init__(
            alias=alias,
            client=client if client is not None else build_client(options),
            owns_client=client is None,
            retry=retry if retry is not None else RetryPolicy(),
            refresh=None if refresh == "false" else refresh,
            require_alias=True,
        )

    @property
    def model_id(self) -> str | None:
        binding = self._read_binding()
        return binding.model_id if binding else None

    def bind_model(self, model_id: str, dimension: int) -> None:
        wanted = Binding(model_id, dimension)
        current = self._read_binding()
        if current is None:
            self._create_index(wanted)
        elif current.dimension != dimension:
            raise ValueError(f"the index behind '{self._alias}' holds {current.dimension}-dimensional vectors; "
                             "clear it before binding another dimension")
        elif current.model_id != model_id:
            self._request("put mapping", lambda: self._client.indices.put_mapping(
                index=self._alias, body={"_meta": _meta(wanted)}))
        self._binding = wanted

    def upsert(self, chunks_: Sequence[IndexedChunk]) -> None:
        self._write([BulkAction("index", chunk.id, chunk.id, {
            "id": chunk.id, "text": chunk.text, "vector": vector_values(chunk.vector), "source": chunk.source,
            "source_type": chunk.source_type.value, "language": chunk.language}) for chunk in chunks_])

    def delete(self, chunk_ids: Sequence[str]) -> None:
        self._write([BulkAction("delete", chunk_id, chunk_id) for chunk_id in dict.fromkeys(chunk_ids)])

    def vector_search(self, vector: npt.NDArray[np.float32], filters: ChunkFilters, k: int) -> list[ChunkHit]:
        if k <= 0:
            return []
        return parse_hits(self._search("k-NN search", knn_query(vector, filters, k)), k, cosine=True)

    def keyword_search(self, text: str, filters: ChunkFilters, k: int) -> list[ChunkHit]:
        if k <= 0 or not search_terms(text):
            return []
        return parse_hits(self._search("keyword search", bm25_query(text, filters, k)), k, cosine=False)

    def count(self) -> int:
        return self._count()

    def clear(self) -> None:
        self._drop_concrete_indices()

    # -- helpers ---------------------------------------------------------------------------------------

    def _recreate_missing_index(self) -> bool:
        if self._binding is None:
            return False
        self._create_index(self._binding)
        return True

    def _read_binding(self) -> Binding | None:
        mappings = self._mappings()
        if mappings is None:
            return None
        self._binding = binding_from_mapping(mappings)
        return self._binding

    def _create_index(self, binding: Binding) -> None:
        self._create_concrete_index(concrete_index_name(self._alias, binding.dimension),
                                    index_body(self._alias, binding))

    def _write(self, actions: Sequence[BulkAction]) -> None:
        refused, overloaded = self._write_all(actions)
        if refused or overloaded:
            raise BulkWriteError({**refused, **overloaded})

