"""Ranking: reciprocal rank fusion and Zengram's `effective_score`. Pure functions, no I/O."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from zengram.kernel.fusion import Candidate as Candidate
from zengram.kernel.fusion import fuse as fuse
from zengram.memory.domain.models import Importance, Memory, MemoryType
from zengram.memory.domain.query import QueryBoosts
from zengram.memory.domain.retrieval import DEFAULT_PROFILE

IMPORTANCE_WEIGHTS: dict[Importance, float] = {
    Importance.CRITICAL: 1.0,
    Importance.HIGH: 0.85,
    Importance.MEDIUM: 0.7,
    Importance.LOW: 0.5,
}
DECAYING_TYPES = frozenset({MemoryType.FACT, MemoryType.STATUS})
SECONDS_PER_DAY = 86_400.0
Fusion = Literal["blend", "linear"]


@dataclass(frozen=True)
class ScoringConfig:
    """How hits are ranked. The defaults here are the product's (Settings takes them from here); the query boosts
    come from the retrieval profile (`zengram.memory.domain.retrieval`), the default profile's unless given."""

    rrf_k: int = 60
    decay_factor: float = 0.98
    similarity_floor: float = 0.55
    vector_weight: float = 0.6  # the vector path's share under "blend" fusion
    # Reinforcement, bounded so that relevance dominates (ADR 0042): semantics.md's 0.3 and 2.0 let a hit searched
    # six times (×1.84) outrank one nearly twice as relevant; ×1.15 at most lets popularity only order hits of
    # near-equal relevance (within 13 %). Both are settings (ZENGRAM_ACCESS_BOOST_SLOPE / _CAP; 0.3 / 2.0: the spec's).
    access_boost_slope: float = 0.05
    access_boost_cap: float = 1.15
    # "linear": max-normalised path scores (LoCoMo dev5 recall@10 0.72 vs 0.58, bench/recall/RESULTS.md);
    # "blend": similarity and RRF (semantics.md)
    fusion: Fusion = "linear"
    linear_vector_weight: float = 0.2  # the vector path's share under "linear" fusion
    # Under "linear" fusion, a memory this close to the query (cosine) scores at least its cosine: one that says what
    # the query says must not sink below keyword matches because the keyword path missed it (long queries keep only
    # their rarest terms, and neighbour context lengthens a turn's text). 1.0: only identical vectors.
    near_duplicate_cosine: float = 0.95
    speaker_boost: float = DEFAULT_PROFILE.speaker_boost  # × for a "Speaker: ..." memory whose speaker the query names
    time_boost: float = DEFAULT_PROFILE.time_boost  # × for a memory that says when, if the query asks when
    # The graph path's weight (when it runs: docs/retrieval-extras.md): × its share under "linear" fusion, beside
    # the vector and keyword shares that sum to 1; × its RRF term under "blend". LoCoMo best 0.1 (upstream's 0.5
    # cost 4.7 pt recall@10, bench/recall/RESULTS.md).
    graph_weight: float = 0.1

    def query_boosts(self) -> QueryBoosts:
        return QueryBoosts(speaker=self.speaker_boost, time=self.time_boost)


DEFAULT_SCORING = ScoringConfig()


def _share(score: float | None, top: float) -> float:
    """A path's score as a fraction of its best score in this search; 0 when the path missed it."""
    if score is None or top <= 0:
        return 0.0
    return max(score, 0.0) / top


GRAPH_PATH = "graph"


def rrf_score(candidate: Candidate, k: int, graph_weight: float = 1.0) -> float:
    """Σ 1/(k + rank) over the paths that found it; the graph path's term weighs `graph_weight`."""
    return sum((graph_weight if path == GRAPH_PATH else 1.0) / (k + rank) for path, rank in candidate.ranks.items())


def similarity(cosine: float | None, floor: float) -> float:
    """Maps cosine [-1, 1] to [0, 1]; keyword-only hits and weak matches get the floor."""
    if cosine is None:
        return floor
    return max(0.5 + cosine / 2.0, floor)


def effective_confidence(memory: Memory, now: datetime, decay_factor: float) -> float:
    """Facts and statuses fade by `decay_factor` per day since last use; other types never decay."""
    if memory.type not in DECAYING_TYPES:
        return memory.confidence
    last_touched = memory.last_accessed_at or memory.created_at
    days = max((now - last_touched).total_seconds(), 0.0) / SECONDS_PER_DAY
    return float(memory.confidence * decay_factor**days)


def access_boost(access_count: int, config: ScoringConfig) -> float:
    return min(1.0 + config.access_boost_slope * math.log2(access_count + 1), config.access_boost_cap)


@dataclass(frozen=True)
class ScoredMemory:
    """`score`: the fused relevance; `effective_score` = score × `multiplier` (confidence decay, access boost,
    temporal and query boosts, importance), so a re-ranker's relevance can take the score's place."""

    memory: Memory
    score: float
    effective_score: float
    sources: list[str]
    multiplier: float = 1.0


def score_candidates(
    candidates: dict[str, Candidate],
    memories: dict[str, Memory],
    *,
    now: datetime,
    multi_path: bool,
    config: ScoringConfig,
    temporal_boost: float = 1.0,
    boosts: Mapping[str, float] | None = None,
) -> list[ScoredMemory]:
    """Scores every candidate whose memory is known, best first (ties: newer first, then id).

    `boosts`: per-memory multipliers from the query (see `zengram.memory.domain.query.candidate_boosts`)."""
    known = [c for c in candidates.values() if c.id in memories]
    max_rrf = max((rrf_score(c, config.rrf_k, config.graph_weight) for c in known), default=0.0)
    tops = {path: max((c.scores.get(path, 0.0) for c in known), default=0.0)
            for path in ("vector", "keyword", GRAPH_PATH)}
    scored = [
        _score_one(c, memories[c.id], max_rrf, now=now, multi_path=multi_path, config=config,
                   temporal_boost=temporal_boost * (boosts or {}).get(c.id, 1.0), tops=tops)
        for c in known
    ]
    scored.sort(key=lambda s: (-s.effective_score, -s.memory.created_at.timestamp(), s.memory.id))
    return scored


def _score_one(
    candidate: Candidate,
    memory: Memory,
    max_rrf: float,
    *,
    now: datetime,
    multi_path: bool,
    config: ScoringConfig,
    temporal_boost: float,
    tops: dict[str, float] | None = None,
) -> ScoredMemory:
    sim = similarity(candidate.cosine, config.similarity_floor)
    if multi_path and config.fusion == "linear" and tops:
        weight = config.linear_vector_weight
        blended = (weight * _share(candidate.scores.get("vector"), tops["vector"])
                   + (1 - weight) * _share(candidate.scores.get("keyword"), tops["keyword"])
                   + config.graph_weight * _share(candidate.scores.get(GRAPH_PATH), tops[GRAPH_PATH]))
        if candidate.cosine is not None and candidate.cosine >= config.near_duplicate_cosine:
            blended = max(blended, candidate.cosine)
    elif multi_path and max_rrf > 0:
        rrf = rrf_score(candidate, config.rrf_k, config.graph_weight)
        blended = config.vector_weight * sim + (1 - config.vector_weight) * rrf / max_rrf
    elif candidate.cosine is None and max_rrf > 0:  # a keyword-only search: its rank is all there is
        blended = rrf_score(candidate, config.rrf_k, config.graph_weight) / max_rrf
    else:
        blended = sim
    multiplier = (
        effective_confidence(memory, now, config.decay_factor)
        * access_boost(memory.access_count, config)
        * temporal_boost
        * IMPORTANCE_WEIGHTS[memory.importance]
    )
    return ScoredMemory(memory, round(blended, 4), round(blended * multiplier, 4), candidate.sources, multiplier)
