"""Re-ranking the fused top of a search by a re-ranker's relevance scores, as upstream Zengram v4 does: the
relevance (a probability in [0, 1], or a raw logit mapped through a sigmoid) takes the place of the fused
score, and the memory's multipliers (decay, access, boosts, importance) still apply. Pure, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta

from zengram.memory.domain.circuit import CircuitBreaker
from zengram.memory.domain.scoring import ScoredMemory


@dataclass(frozen=True)
class RerankPolicy:
    """How the rerank hook uses a re-ranker. The defaults are the product's (Settings takes them from here):
    upstream's 40 candidates; a 3 s timeout (upstream: 20 s) so that a search never hangs on an optional stage;
    after `circuit_failures` consecutive failures the hook stops asking for `circuit_open`."""

    enabled: bool = False  # the hook runs when enabled and a re-ranker URL is configured
    candidates: int = 40  # the fused top re-scored (at least the request's limit)
    timeout_seconds: float = 3.0  # one search's wait for the re-ranker, all chunks together
    max_batch: int = 32  # documents per request (a larger pool is sent in chunks)
    circuit_failures: int = 3
    circuit_open: timedelta = timedelta(seconds=30)

    def breaker(self) -> CircuitBreaker:
        return CircuitBreaker(failures_to_open=self.circuit_failures, open_for=self.circuit_open)


DEFAULT_RERANK = RerankPolicy()


def relevance(raw: float) -> float:
    """A re-ranker's score as a relevance in [0, 1]: kept when already there, else a logit's sigmoid."""
    if 0.0 <= raw <= 1.0:
        return raw
    if raw >= 0:
        return 1.0 / (1.0 + math.exp(-raw))
    exp = math.exp(raw)  # the same sigmoid, without overflowing for very negative logits
    return exp / (1.0 + exp)


def apply_rerank(pool: Sequence[ScoredMemory], scores: Mapping[int, float]) -> list[ScoredMemory]:
    """`pool` re-scored by `scores` (position in `pool` → raw score) and re-sorted by the new effective
    score; hits the re-ranker left out follow in their fused order (ties, too, keep the fused order)."""
    rescored = []
    for position, hit in enumerate(pool):
        if position in scores:
            fused = relevance(scores[position])
            rescored.append(replace(hit, score=round(fused, 4), effective_score=round(fused * hit.multiplier, 4)))
    rescored.sort(key=lambda hit: -hit.effective_score)
    return rescored + [hit for position, hit in enumerate(pool) if position not in scores]
