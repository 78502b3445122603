"""The rerank hook: the fused top of a search re-scored by a `Reranker` (upstream Zengram v4's optional
cross-encoder stage). A re-ranker that fails, times out or is known to be down leaves the fused order as
it was: a re-ranker outage never makes search worse than without one, nor much slower (a circuit breaker
stops asking it for a while after repeated failures).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from zengram.kernel.outbox import describe_error
from zengram.kernel.ports import Clock
from zengram.memory.domain.circuit import CircuitBreaker
from zengram.memory.domain.rerank import apply_rerank
from zengram.memory.domain.scoring import ScoredMemory
from zengram.memory.ports import Reranker

logger = logging.getLogger(__name__)


class RerankStage:
    """Re-scores the best `candidates` hits (at least the request's limit) by the re-ranker, on each memory's
    full text."""

    def __init__(self, reranker: Reranker, clock: Clock, *, candidates: int, breaker: CircuitBreaker) -> None:
        self._reranker = reranker
        self._clock = clock
        self._candidates = candidates
        self._breaker = breaker

    def apply(self, query: str, scored: Sequence[ScoredMemory], limit: int) -> tuple[list[ScoredMemory], bool]:
        """(hits, whether they were re-ranked): the re-ranked pool then the rest, or `scored` unchanged."""
        pool = list(scored[:max(limit, self._candidates)])
        if len(pool) < 2 or not self._breaker.allow(self._clock.now()):
            return list(scored), False
        try:
            scores = self._reranker.rerank(query, [hit.memory.content for hit in pool])
        except Exception as error:
            self._breaker.failed(describe_error(error), self._clock.now())
            logger.warning("re-ranker %s failed; keeping the fused order: %s", self._reranker.describe(),
                           describe_error(error))
            return list(scored), False
        self._breaker.succeeded()
        return [*apply_rerank(pool, scores), *scored[len(pool):]], True

    def close(self) -> None:
        self._reranker.close()
