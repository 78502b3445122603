"""GET /stats: the memory health dashboard, read from counters the stores keep (never a scan of the records)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Protocol

from zengram.kernel.keys import TenantScope
from zengram.kernel.outbox import ParkedRecord, describe_error
from zengram.kernel.ports import Clock, SearchIndex
from zengram.memory.domain.entities import EntityStats
from zengram.memory.domain.models import MemoryType
from zengram.memory.domain.scoring import DECAYING_TYPES
from zengram.memory.domain.stats import RecordStats, stats_of
from zengram.memory.domain.tenant_entities import EntityTally
from zengram.memory.ports import IndexOutbox, RecordCounters, RecordStore

logger = logging.getLogger(__name__)
TOP_MENTIONED = 10
PARKED_SHOWN = 10  # parked records /stats names (it counts them all)
# A tenant's pending index writes are counted among the first this many of the whole queue (normally empty).
TENANT_PENDING_SCAN = 1_000


class EntityStatsSource(Protocol):
    """What the dashboard needs of the entity registry (`zengram.memory.ports.EntityStore` has it)."""

    def stats(self, top: int = 10) -> EntityStats: ...


@dataclass(frozen=True)
class IndexStatus:
    """How the search index is doing: its document count (None when it cannot be counted now, `error` says
    why) and the records the repair sweep parked."""

    count: int | None
    error: str | None = None
    parked: list[ParkedRecord] = field(default_factory=list)

    @property
    def state(self) -> str:
        """"ok"; "unavailable" (the index cannot be reached: writes are stored and wait); "degraded" (it answers,
        but some records are parked, so search misses them)."""
        if self.count is None:
            return "unavailable"
        return "degraded" if self.parked else "ok"


@dataclass(frozen=True)
class Dashboard:
    """Everything GET /stats reports. `entities` is None where no entity registry is wired."""

    records: RecordStats
    index: IndexStatus
    decay_factor: float
    decaying_types: list[MemoryType]
    multi_path: bool
    keyword_search: bool
    entities: EntityStats | None


class StatsService:
    def __init__(self, counters: RecordCounters, outbox: IndexOutbox, records: RecordStore, index: SearchIndex,
                 decay_factor: float, search_paths: str, clock: Clock,
                 entities: EntityStatsSource | None = None) -> None:
        self._counters = counters
        self._outbox = outbox
        self._records = records
        self._index = index
        self._decay_factor = decay_factor
        self._search_paths = search_paths
        self._clock = clock
        self._entities = entities

    def dashboard(self, scope: TenantScope = TenantScope.EVERYONE) -> Dashboard:
        if scope.is_restricted:
            return self._tenant_dashboard(scope)
        factor = self._decay_factor
        paths = self._search_paths
        # Counted first: the index count waits for the index writes queued behind their answers, so the
        # counters read after it count none of those as pending.
        counted = self._index_count()
        records = self._counters.stats(self._clock.now(), factor)
        parked = self._outbox.parked_index(PARKED_SHOWN) if records.parked_index else []
        return Dashboard(
            records=records,
            index=replace(counted, parked=parked),
            decay_factor=factor,
            decaying_types=[type_ for type_ in MemoryType if type_ in DECAYING_TYPES],
            multi_path=paths == "hybrid",
            keyword_search=paths != "vector",
            entities=self._entities.stats(TOP_MENTIONED) if self._entities is not None else None,
        )

    def totals(self, scope: TenantScope = TenantScope.EVERYONE) -> tuple[int, int | None]:
        """Memories stored and documents indexed (None while the index cannot be counted): a briefing's
        `brain_stats`, from the counters (a restricted scope counts its own, as `dashboard` does)."""
        if scope.is_restricted:
            dashboard = self._tenant_dashboard(scope)
            return dashboard.records.total, dashboard.index.count
        records = self._counters.stats(self._clock.now(), self._decay_factor)
        try:
            return records.total, self._index.count()
        except Exception as error:
            logger.warning("could not count the search index: %s", describe_error(error))
            return records.total, None

    def _index_count(self) -> IndexStatus:
        """The index's count (one document per indexed memory: vectors and keywords alike), or why there is none
        (the index's circuit breaker answers at once while it is open)."""
        try:
            return IndexStatus(count=self._index.count())
        except Exception as error:
            logger.warning("GET /stats could not count the search index: %s", describe_error(error))
            return IndexStatus(count=None, error=str(error))

    def _tenant_dashboard(self, scope: TenantScope) -> Dashboard:
        """The dashboard of a key limited to some clients, counted from their memories (one read of them all):
        the stores' counters, the index count and the entity registry span every tenant. The index count is the
        scope's memories the index holds, i.e. those not deleted and not waiting for the index."""
        now, factor = self._clock.now(), self._decay_factor
        memories = list(self._records.iter_all(include_deleted=True, client_ids=scope.sorted_clients()))
        pending = [m for m in self._outbox.pending_index(TENANT_PENDING_SCAN) if scope.allows(m.client_id)]
        records = stats_of(memories, now, factor, pending_index=len(pending))
        indexed = records.total - sum(1 for memory in pending if not memory.is_deleted)
        paths = self._search_paths
        return Dashboard(records=records, index=IndexStatus(count=max(0, indexed)), decay_factor=factor,
                         decaying_types=[type_ for type_ in MemoryType if type_ in DECAYING_TYPES],
                         multi_path=paths == "hybrid", keyword_search=paths != "vector",
                         entities=EntityTally.of(memories).stats(TOP_MENTIONED) if self._entities else None)
