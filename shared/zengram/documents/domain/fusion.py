"""How the retrieval legs' hits become one ranking of relevance scores (docs/documents.md, "Scores").

Every mode scores a chunk the same way (`relevance.relevance`): its calibrated semantic relevance to the query,
lifted by keyword agreement and at least its graph score. The modes differ in which legs propose candidates and
how much keyword agreement weighs:

- vector: the vector leg's hits, no keyword lift;
- bm25: the BM25 leg's hits, the full lift;
- hybrid: both legs' hits (whichever has any), the lift weighted by `1 − α`;
- graph: the graph walk's chunks scored by the walk (already in [0, 1]: a named entity 0.9–1.0, less per hop),
  or the vector leg's when the walk finds none;
- multi: all three legs' hits, the lift weighted by `1 − α`.

`similarity_threshold` applies to the final score in every mode.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from zengram.documents.domain.relevance import relevance


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


def above_threshold(hits: Sequence[Fused], threshold: float) -> list[Fused]:
    return [hit for hit in hits if hit.score >= threshold]


def ranked(fused: dict[str, Fused], top_k: int) -> list[Fused]:
    return sorted(fused.values(), key=lambda hit: (-hit.score, -(hit.bm25 or 0.0), hit.chunk_id))[:top_k]


def candidates(*legs: Sequence[LegHit]) -> list[str]:
    """The chunk ids the legs propose, each once, in leg order."""
    return list(dict.fromkeys(hit.chunk_id for leg in legs for hit in leg))


def fuse(chunk_ids: Sequence[str], semantic: Callable[[str], float] | None, bm25_hits: Sequence[LegHit],
         graph_hits: Sequence[LegHit], lexical_weight: float) -> dict[str, Fused]:
    """Scores each of `chunk_ids`: `semantic(id)` is its calibrated vector relevance; its BM25 score counts relative
    to this query's best, weighted by `lexical_weight`; its graph score is a floor. Without `semantic` (graph mode
    when the walk found chunks: the walk's scores are the ranking asked for) the graph score alone."""
    bm25 = relative(bm25_hits)
    graph = {hit.chunk_id: hit.score for hit in graph_hits}
    fused = {}
    for chunk_id in chunk_ids:
        vector = round(semantic(chunk_id), 6) if semantic else None
        keyword, walk = bm25.get(chunk_id), graph.get(chunk_id)
        score = relevance(vector or 0.0, bm25=keyword, graph=walk, lexical_weight=lexical_weight)
        fused[chunk_id] = Fused(chunk_id, score, vector=vector, bm25=keyword, graph=walk)
    return fused
