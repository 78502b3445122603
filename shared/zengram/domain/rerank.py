"""Re-ranking the fused top of a search by a re-ranker's relevance scores, as upstream Zengram v4 does: the
relevance (a probability in [0, 1], or a raw logit mapped through a sigmoid) takes the place of the fused
score, and the memory's multipliers (decay, access, boosts, importance) still apply. Pure, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from zengram.domain.scoring import ScoredMemory


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
