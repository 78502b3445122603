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
from collections.abc import Callable, Sequence
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from zengram.adapters.opensearch.bulk import BulkAction, BulkWriteError, Outcome, chunks, judge, ndjson
from zengram.adapters.opensearch.client import (
    Auth,
    AwsService,
    ClientOptions,
    RetryPolicy,
    build_client,
    error_type_of,
    failure,
    is_index_missing,
)
from zengram.adapters.opensearch.mapping import Binding, binding_from_mapping
from zengram.adapters.opensearch.queries import MAX_QUERY_CHARS, lucene_cosine, vector_values
from zengram.domain.text import search_terms
from zengram.ports_documents import ChunkFilters, ChunkHit, IndexedChunk

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


class OpenSearchChunkIndex:
    def __init__(self, url: str, *, alias: str = "zengram-documents", auth: Auth = "none",
                 username: str | None = None, password: str | None = None, aws_region: str | None = None,
                 aws_service: AwsService = "es", aws_credentials: Any | None = None, refresh: str = "false",
                 client: Any | None = None, timeout: float = 10.0, max_attempts: int = 5,
                 retry_delay: float = 0.2, retry_budget: float | None = None) -> None:
        if aws_service == "aoss":
            raise ValueError("the document index needs an OpenSearch domain: Serverless collections assign document "
                             "ids themselves, and chunk ids must be the document ids")
        self._alias = alias
        self._refresh = None if refresh == "false" else refresh
        self._retry = RetryPolicy(attempts=max_attempts, base_delay=retry_delay, budget=retry_budget)
        self._owns_client = client is None
        self._client: Any = client if client is not None else build_client(ClientOptions(
            url=url, auth=auth, username=username, password=password, aws_region=aws_region,
            aws_service=aws_service, aws_credentials=aws_credentials, timeout=timeout))
        self._binding: Binding | None = None

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

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
        try:
            response = self._request("count", lambda: self._client.count(index=self._alias), is_index_missing)
        except Exception as error:
            if is_index_missing(error):
                return 0
            raise
        return int(response.get("count", 0))

    def clear(self) -> None:
        try:
            names = sorted(self._request("get alias", lambda: self._client.indices.get_alias(name=self._alias),
                                         _is_not_found))
        except Exception as error:
            if not _is_not_found(error):
                raise
            names = []
        if names:
            self._request("delete index", lambda: self._client.indices.delete(index=",".join(names)))
        self._binding = None

    # -- helpers ---------------------------------------------------------------------------------------

    def _request(self, operation: str, request: Callable[[], Any],
                 handled: Callable[[BaseException], bool] = lambda _: False) -> Any:
        """Runs a request with retries. Errors the caller `handled` reach it as opensearch-py raised them; any other
        client error becomes the port's `IndexRejected` when it refuses this very request, else an
        `OpenSearchIndexError` (503 at the API); never a bare client exception (a 500)."""
        from opensearchpy.exceptions import OpenSearchException

        try:
            return self._retry.call(operation, request)
        except OpenSearchException as error:
            if handled(error):
                raise
            raise failure(operation, error) from error

    def _search(self, operation: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            response: dict[str, Any] = self._request(
                operation, lambda: self._client.search(index=self._alias, body=body), is_index_missing)
        except Exception as error:
            if is_index_missing(error):
                return {}
            raise
        return response

    def _read_binding(self) -> Binding | None:
        try:
            response = self._request("get mapping", lambda: self._client.indices.get_mapping(index=self._alias),
                                     is_index_missing)
        except Exception as error:
            if is_index_missing(error):
                return None
            raise
        if not response:
            return None
        self._binding = binding_from_mapping(response[sorted(response)[0]])
        return self._binding

    def _create_index(self, binding: Binding) -> None:
        name = concrete_index_name(self._alias, binding.dimension)
        try:
            self._request("create index", lambda: self._client.indices.create(
                index=name, body=index_body(self._alias, binding)), _already_exists)
        except Exception as error:
            if error_type_of(error) != "resource_already_exists_exception":
                raise
            self._request("put alias", lambda: self._client.indices.put_alias(index=name, name=self._alias))
        logger.info("created OpenSearch index %s behind alias %s for %s", name, self._alias, binding.model_id)

    def _write(self, actions: Sequence[BulkAction]) -> None:
        failures: dict[str, str] = {}
        for batch in chunks(actions):
            failures.update(self._bulk(batch))
        if failures:
            raise BulkWriteError(failures)

    def _bulk(self, actions: list[BulkAction]) -> dict[str, str]:
        """Sends the actions, retrying rejected items with backoff and recreating a missing index once; returns
        why each chunk that could not be written failed."""
        pending, recreated = actions, False
        reasons: dict[str, str] = {}
        for attempt in range(1, self._retry.attempts + 1):
            judged = self._send(pending)
            missing = any(outcome is Outcome.INDEX_MISSING for _, outcome, _ in judged)
            if missing and not recreated and self._binding is not None:
                self._create_index(self._binding)
                recreated = True
            failures: dict[str, str] = {}
            retry: list[BulkAction] = []
            for action, outcome, reason in judged:
                if outcome is Outcome.RETRY or (outcome is Outcome.INDEX_MISSING and recreated):
                    retry.append(action)
                    reasons[action.memory_id] = reason
                elif outcome is not Outcome.DONE:
                    failures[action.memory_id] = reason
            if failures or not retry:
                return failures
            pending = retry
            if not missing:
                self._retry.pause(attempt)
        return {action.memory_id: f"still failing after {self._retry.attempts} attempts ({reasons[action.memory_id]})"
                for action in pending}

    def _send(self, actions: list[BulkAction]) -> list[tuple[BulkAction, Outcome, str]]:
        params = {"require_alias": "true", **({"refresh": self._refresh} if self._refresh else {})}
        try:
            response = self._request("bulk", lambda: self._client.bulk(body=ndjson(actions), index=self._alias,
                                                                       params=params), is_index_missing)
        except Exception as error:
            if not is_index_missing(error):
                raise
            response = {"items": [{action.kind: {"status": 404, "error": {"type": "index_not_found_exception"}}}
                                  for action in actions]}
        items = response.get("items", [])
        if len(items) != len(actions):
            raise BulkWriteError({action.memory_id: "OpenSearch answered a different number of bulk items"
                                  for action in actions})
        return [(action, *judge(action, item)) for action, item in zip(actions, items, strict=True)]


def _already_exists(error: BaseException) -> bool:
    return error_type_of(error) == "resource_already_exists_exception"


def _is_not_found(error: BaseException) -> bool:
    return getattr(error, "status_code", None) == 404
