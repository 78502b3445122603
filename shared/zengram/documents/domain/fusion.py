"""How the retrieval legs' rankings become one (semantics.md, "Documents").

- hybrid: relative score fusion, `α·v/max_v + (1−α)·bm25/max_bm25`, over the hits of this query;
- multi: reciprocal rank fusion, `Σ 1/(k + rank)` with k = 60, over vector, BM25 and graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

RRF_K = 60


@dataclass(frozen=True)
class LegHit:
    chunk_id: str
    score: float


@dataclass(frozen=True)
class Fused:
    chunk_id: str
    score: float
    vector: float | None = None
    bm25: float | None = None
    graph: float | None = None


def relative(hits: Sequence[LegHit]) -> dict[str, float]:
    """Each score over the best of its leg (a leg whose best is not positive scores nothing)."""
    best = max((hit.score for hit in hits), default=0.0)
    if best <= 0:
        return {hit.chunk_id: 0.0 for hit in hits}
    return {hit.chunk_id: hit.score / best for hit in hits}


def above_threshold(hits: Sequence[LegHit], threshold: float) -> list[LegHit]:
    return [hit for hit in hits if hit.score >= threshold]


def ranked(fused: dict[str, Fused], top_k: int) -> list[Fused]:
    return sorted(fused.values(), key=lambda hit: (-hit.score, hit.chunk_id))[:top_k]


def vector_only(hits: Sequence[LegHit], top_k: int) -> list[Fused]:
    return ranked({hit.chunk_id: Fused(hit.chunk_id, hit.score, vector=hit.score) for hit in hits}, top_k)


def bm25_only(hits: Sequence[LegHit], top_k: int) -> list[Fused]:
    normalised = relative(hits)
    return ranked({cid: Fused(cid, score, bm25=score) for cid, score in normalised.items()}, top_k)


def graph_only(hits: Sequence[LegHit], top_k: int) -> list[Fused]:
    return ranked({hit.chunk_id: Fused(hit.chunk_id, hit.score, graph=hit.score) for hit in hits}, top_k)


def hybrid(vector_hits: Sequence[LegHit], bm25_hits: Sequence[LegHit], alpha: float, top_k: int) -> list[Fused]:
    """`vector_score` is the cosine itself; `bm25_score` the BM25 score over this query's best."""
    vector_relative, bm25_relative = relative(vector_hits), relative(bm25_hits)
    cosine = {hit.chunk_id: hit.score for hit in vector_hits}
    fused = {
        chunk_id: Fused(
            chunk_id,
            round(alpha * vector_relative.get(chunk_id, 0.0) + (1 - alpha) * bm25_relative.get(chunk_id, 0.0), 6),
            vector=cosine.get(chunk_id),
            bm25=bm25_relative.get(chunk_id),
        )
        for chunk_id in {**vector_relative, **bm25_relative}
    }
    return ranked(fused, top_k)


def reciprocal_rank(vector_hits: Sequence[LegHit], bm25_hits: Sequence[LegHit], graph_hits: Sequence[LegHit],
                    top_k: int, k: int = RRF_K) -> list[Fused]:
    """Rank 1 is the best of a leg; a chunk in several legs adds their terms."""
    totals: dict[str, float] = {}
    for hits in (vector_hits, bm25_hits, graph_hits):
        for rank, hit in enumerate(hits, start=1):
            totals[hit.chunk_id] = totals.get(hit.chunk_id, 0.0) + 1.0 / (k + rank)
    cosine = {hit.chunk_id: hit.score for hit in vector_hits}
    bm25_relative = relative(bm25_hits)
    graph = {hit.chunk_id: hit.score for hit in graph_hits}
    fused = {chunk_id: Fused(chunk_id, round(score, 6), vector=cosine.get(chunk_id),
                             bm25=bm25_relative.get(chunk_id), graph=graph.get(chunk_id))
             for chunk_id, score in totals.items()}
    return ranked(fused, top_k)
