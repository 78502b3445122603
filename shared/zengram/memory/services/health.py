"""GET /health: whether the service's dependencies answer (upstream Zengram's `checks`, 503 when one is down)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from zengram.kernel.outbox import describe_error
from zengram.kernel.ports import Embedder, SearchIndex
from zengram.memory.ports import RecordStore
from zengram.memory.services.cache import Expiring

logger = logging.getLogger(__name__)
UP, DOWN = "up", "down"
PROBE_ID = "zengram-health-probe"  # an id no memory has: reading it asks the record store without finding anything
EMBEDDER_CHECK_SECONDS = 60.0  # a paid embedding API is asked at most once a minute per process


@dataclass(frozen=True)
class HealthReport:
    checks: dict[str, str]  # dependency → "up" | "down"

    @property
    def healthy(self) -> bool:
        return all(state == UP for state in self.checks.values())


class HealthService:
    """Asks each dependency the cheapest question it answers: the record store one read, the search index its
    count, the embedder one short text (remembered for a minute: it may be a paid API)."""

    def __init__(self, records: RecordStore, index: SearchIndex, embedder: Embedder,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._records = records
        self._index = index
        self._embedder = embedder
        self._embeddings = Expiring(lambda: _state("embeddings", lambda: embedder.embed(["health check"])),
                                    EMBEDDER_CHECK_SECONDS, monotonic)

    def check(self) -> HealthReport:
        return HealthReport({
            "records": _state("records", lambda: self._records.get(PROBE_ID)),
            "search_index": _state("search_index", self._index.count),
            "embeddings": self._embeddings.get(),
        })


def _state(name: str, probe: Callable[[], object]) -> str:
    try:
        probe()
    except Exception as error:
        logger.warning("health check: %s is down: %s", name, describe_error(error))
        return DOWN
    return UP
