"""The memory health dashboard: counts the stores keep as they go, so it stays cheap as the store grows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter

from zengram.kernel.timestamps import format_timestamp
from zengram.memory.api.deps import StatsServiceDep
from zengram.memory.api.schemas.stats import (
    DecayConfig,
    IndexHealth,
    ParkedRecordBody,
    StatsBody,
    StatsEntities,
    StatsEntity,
    StatsRetrieval,
)
from zengram.memory.domain.entities import EntityStats
from zengram.web.access import ScopeDep
from zengram.web.schemas import ERROR_RESPONSES

if TYPE_CHECKING:  # types only: the service is built (and imported) with the container
    from zengram.memory.services.stats import Dashboard

router = APIRouter(tags=["stats"], responses=ERROR_RESPONSES)


@router.get("/stats", response_model=StatsBody)
def get_stats(stats: StatsServiceDep, scope: ScopeDep) -> StatsBody:
    """Counts over every memory; a key limited to some clients gets the counts of theirs (docs/keys.md)."""
    dashboard = stats.dashboard(scope)
    records = dashboard.records
    return StatsBody(
        total_memories=records.total,
        vectors_count=dashboard.index.count,
        active=records.active,
        superseded=records.superseded,
        deleted=records.deleted,
        consolidated=records.consolidated,
        by_type={type_.value: count for type_, count in records.by_type.items()},
        decayed_below_50pct=records.decayed_below_50pct,
        decay_config=DecayConfig(factor=dashboard.decay_factor,
                                 affected_types=[type_.value for type_ in dashboard.decaying_types]),
        entities=_entities(dashboard.entities) if dashboard.entities is not None else None,
        retrieval=StatsRetrieval(multi_path=dashboard.multi_path, keyword_search=dashboard.keyword_search,
                                 keyword_index_count=dashboard.index.count),
        index_health=_index_health(dashboard),
    )


def _index_health(dashboard: Dashboard) -> IndexHealth:
    index, records = dashboard.index, dashboard.records
    return IndexHealth(
        status=index.state, error=index.error, pending_index=records.pending_index, parked=records.parked_index,
        parked_records=[ParkedRecordBody(id=parked.memory_id, revision=parked.revision, attempts=parked.attempts,
                                         last_error=parked.last_error, parked_at=format_timestamp(parked.parked_at))
                        for parked in index.parked],
    )


def _entities(entities: EntityStats) -> StatsEntities:
    return StatsEntities(
        total=entities.total, by_type=entities.by_type,
        top_mentioned=[StatsEntity(canonical_name=entity.name, entity_type=entity.type.value,
                                   mention_count=entity.mention_count, name=entity.name, type=entity.type.value)
                       for entity in entities.top_mentioned],
    )
