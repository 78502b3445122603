"""GET /stats' body: the memory health dashboard."""

from __future__ import annotations

from pydantic import BaseModel

from zengram.web.schemas import left_out

# -- GET /stats ------------------------------------------------------------------------------------------


class DecayConfig(BaseModel):
    factor: float
    affected_types: list[str]


class StatsEntity(BaseModel):
    canonical_name: str  # upstream's names
    entity_type: str
    mention_count: int
    name: str  # ours
    type: str


class StatsEntities(BaseModel):
    total: int
    by_type: dict[str, int]
    top_mentioned: list[StatsEntity]


class StatsRetrieval(BaseModel):
    multi_path: bool
    keyword_search: bool
    keyword_index_count: int | None = left_out()  # absent while the search index cannot be counted


class ParkedRecordBody(BaseModel):
    id: str
    revision: int
    attempts: int  # failed repair attempts at this revision
    last_error: str
    parked_at: str


class IndexHealth(BaseModel):
    """The search index and the queue of changes waiting for it (the record store keeps that queue)."""

    status: str  # ok | degraded (records parked: search misses them) | unavailable (writes are stored and wait)
    error: str | None = left_out()  # why the index is unavailable
    pending_index: int  # memories whose last change has not reached the index yet (the repair sweep's queue)
    parked: int  # memories the sweep gave up on after repeated failures (retry: `zengram repair --retry-parked`)
    parked_records: list[ParkedRecordBody]  # the oldest parked ones (at most 10), with their last error


class StatsBody(BaseModel):
    total_memories: int
    vectors_count: int | None = left_out()  # absent while the index cannot be counted (see index_health)
    active: int
    superseded: int
    deleted: int
    consolidated: int
    by_type: dict[str, int]
    decayed_below_50pct: int
    decay_config: DecayConfig
    entities: StatsEntities | None = left_out()  # absent where no entity registry is wired
    retrieval: StatsRetrieval
    index_health: IndexHealth
