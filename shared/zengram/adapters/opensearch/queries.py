"""Search request bodies and hit parsing: the same filters for the k-NN path and the BM25 path."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from zengram.kernel.search import MEMORY_SCOPE, IndexHit, SearchFilters
from zengram.memory.domain.models import as_utc

CATEGORICAL_FIELDS = ("type", "source_agent", "client_id", "category", "knowledge_category")
# The standard tokenizer yields at most one token per two characters, so this keeps a match query
# under OpenSearch's default limit of 1024 boolean clauses whatever the caller sends.
MAX_QUERY_CHARS = 2000
# Only the memory id comes back: never the stored vector.
_SOURCE = ["id"]
_ORDER = [{"_score": {"order": "desc"}}, {"id": {"order": "asc"}}]


def moment(value: datetime) -> str:
    """ISO 8601 in UTC; OpenSearch `date` fields keep milliseconds (finer digits are dropped alike on
    documents and queries, so comparisons only blur within the same millisecond)."""
    return as_utc(value).isoformat()


def vector_values(vector: npt.NDArray[np.floating[Any]]) -> list[float]:
    """JSON-ready floats; 8 decimals keep a unit vector's cosine exact to ~1e-7 at half the bytes."""
    values: list[float] = np.round(np.asarray(vector, dtype=np.float64).ravel(), 8).tolist()
    return values


def filter_clauses(filters: SearchFilters) -> list[dict[str, Any]]:
    """Every `SearchFilters` condition as a non-scoring clause, with the port's active/at_time/date rules."""
    clauses: list[dict[str, Any]] = [
        {"term": {name: getattr(filters, name)}} for name in CATEGORICAL_FIELDS if getattr(filters, name) is not None
    ]
    if filters.client_ids is not None:  # a tenant scope; an empty `terms` list matches nothing
        clauses.append({"terms": {"client_id": list(filters.client_ids)}})
    if not (filters.include_inactive or filters.at_time):
        clauses.append({"term": {"active": True}})
    if filters.at_time is not None:
        clauses.extend(_valid_at(moment(filters.at_time)))
    window = {bound: moment(value) for bound, value in (("gte", filters.date_from), ("lte", filters.date_to))
              if value is not None}
    if window:
        clauses.append({"range": {"valid_from": window}})
    if filters.entity is not None:
        clauses.append({"term": {"entities": filters.entity}})
    clauses.append(_in_scopes(filters.scopes))
    return clauses


def _in_scopes(scopes: tuple[str, ...]) -> dict[str, Any]:
    """Documents in one of `scopes`. Zengram memories (the empty scope) carry no `scope` field; an empty tuple
    matches nothing."""
    named = [scope for scope in scopes if scope != MEMORY_SCOPE]
    either: list[dict[str, Any]] = [{"terms": {"scope": named}}] if named or not scopes else []
    if MEMORY_SCOPE in scopes:
        either.append({"bool": {"must_not": [{"exists": {"field": "scope"}}]}})
    return either[0] if len(either) == 1 else {"bool": {"should": either, "minimum_should_match": 1}}


def _valid_at(at: str) -> list[dict[str, Any]]:
    """valid_from ≤ T and (no valid_to or valid_to > T)."""
    open_ended = {"bool": {"must_not": [{"exists": {"field": "valid_to"}}]}}
    return [
        {"range": {"valid_from": {"lte": at}}},
        {"bool": {"should": [{"range": {"valid_to": {"gt": at}}}, open_ended], "minimum_should_match": 1}},
    ]


def knn_query(vector: npt.NDArray[np.floating[Any]], filters: SearchFilters, k: int) -> dict[str, Any]:
    """Efficient filtering: the filter sits inside the `knn` clause, so the engine searches only
    matching documents (lucene/faiss) rather than filtering k results afterwards."""
    knn: dict[str, Any] = {"vector": vector_values(vector), "k": k}
    clauses = filter_clauses(filters)
    if clauses:
        knn["filter"] = {"bool": {"filter": clauses}}
    return {"size": k, "_source": _SOURCE, "query": {"knn": {"vector": knn}}, "sort": _ORDER, "track_scores": True}


def bm25_query(text: str, filters: SearchFilters, k: int) -> dict[str, Any]:
    """The raw text is sent (analysed by the index's analyzer, like the documents), capped in length."""
    query: dict[str, Any] = {"must": [{"match": {"text": {"query": text[:MAX_QUERY_CHARS]}}}]}
    clauses = filter_clauses(filters)
    if clauses:
        query["filter"] = clauses
    return {"size": k, "_source": _SOURCE, "query": {"bool": query}, "sort": _ORDER, "track_scores": True}


def lucene_cosine(score: float) -> float:
    """The k-NN plugin scores cosinesimil as (1 + cos) / 2 (lucene and faiss alike); this undoes it."""
    return min(1.0, max(-1.0, 2.0 * score - 1.0))


def parse_hits(response: dict[str, Any], k: int, *, cosine: bool) -> list[IndexHit]:
    """Best first, ties by id; one hit per memory id (a server-id index may briefly hold two copies)."""
    best: dict[str, float] = {}
    for hit in response.get("hits", {}).get("hits", []):
        memory_id = str((hit.get("_source") or {}).get("id", hit.get("_id")))
        raw = _score_of(hit)
        score = lucene_cosine(raw) if cosine else raw
        best[memory_id] = max(score, best.get(memory_id, score))
    ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))
    return [IndexHit(id=memory_id, score=score) for memory_id, score in ranked[:k]]


def _score_of(hit: dict[str, Any]) -> float:
    """`_score`, or the first sort value (the score) should a cluster leave `_score` out when sorting."""
    score = hit.get("_score")
    if score is None:
        score = (hit.get("sort") or [0.0])[0]
    return float(score)
