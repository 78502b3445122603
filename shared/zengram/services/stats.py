"""GET /stats: the memory health dashboard, read from counters the stores keep (never a scan of the records)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from zengram.domain.entities import EntityStats
from zengram.domain.models import MemoryType
from zengram.domain.scoring import DECAYING_TYPES
from zengram.domain.stats import RecordStats
from zengram.ports import Clock, RecordStore, SearchIndex
from zengram.settings import Settings

TOP_MENTIONED = 10


class EntityStatsSource(Protocol):
    """What the dashboard needs of the entity registry (`zengram.ports.EntityStore` has it)."""

    def stats(self, top: int = 10) -> EntityStats: ...


@dataclass(frozen=True)
class Dashboard:
    """Everything GET /stats reports. `entities` is None where no entity registry is wired."""

    records: RecordStats
    index_count: int
    decay_factor: float
    decaying_types: list[MemoryType]
    multi_path: bool
    keyword_search: bool
    entities: EntityStats | None


class StatsService:
    def __init__(self, store: RecordStore, index: SearchIndex, settings: Settings, clock: Clock,
                 entities: EntityStatsSource | None = None) -> None:
        self._store = store
        self._index = index
        self._settings = settings
        self._clock = clock
        self._entities = entities

    def dashboard(self) -> Dashboard:
        factor = self._settings.decay_factor
        paths = self._settings.search_paths
        return Dashboard(
            records=self._store.stats(self._clock.now(), factor),
            index_count=self._index.count(),  # one document per indexed memory: vectors and keywords alike
            decay_factor=factor,
            decaying_types=[type_ for type_ in MemoryType if type_ in DECAYING_TYPES],
            multi_path=paths == "hybrid",
            keyword_search=paths != "vector",
            entities=self._entities.stats(TOP_MENTIONED) if self._entities is not None else None,
        )
