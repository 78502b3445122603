"""The memory health dashboard: counts the stores keep as they go, so it stays cheap as the store grows."""

from __future__ import annotations

from fastapi import APIRouter

from zengram.api.access import ScopeDep
from zengram.api.deps import StatsServiceDep
from zengram.api.schemas import (
    ERROR_RESPONSES,
    DecayConfig,
    IndexHealth,
    StatsBody,
    StatsEntities,
    StatsEntity,
    StatsRetrieval,
)
from zengram.domain.entities import EntityStats

router = APIRouter(tags=["stats"], responses=ERROR_RESPONSES)


@router.get("/stats", response_model=StatsBody, response_model_exclude_none=True)
def get_stats(stats: StatsServiceDep, scope: ScopeDep) -> StatsBody:
    """Counts over every memory; a key limited to some clients gets the counts of theirs (docs/keys.md)."""
    dashboard = stats.dashboard(scope)
    records = dashboard.records
    return StatsBody(
        total_memories=records.total,
        vectors_count=dashboard.index_count,
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
                                 keyword_index_count=dashboard.index_count),
        index_health=IndexHealth(pending_index=records.pending_index),
    )


def _entities(entities: EntityStats) -> StatsEntities:
    return StatsEntities(
        total=entities.total, by_type=entities.by_type,
        top_mentioned=[StatsEntity(name=entity.name, type=entity.type.value, mention_count=entity.mention_count)
                       for entity in entities.top_mentioned],
    )
