"""Entities: the registry extraction fills at write time, and reclassification of entity types."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from zengram.api.access import ScopeDep
from zengram.api.deps import EntityServiceDep
from zengram.api.schemas import (
    ENTITY_NOT_FOUND,
    ERROR_RESPONSES,
    CompactRecord,
    EntityBody,
    EntityDetailBody,
    EntityListBody,
    EntityMemoriesBody,
    EntityStatsBody,
    ReclassifyBody,
    ReclassifyChangeBody,
    RelatedEntityBody,
)
from zengram.domain.entities import EntityListRequest, EntityMemoriesRequest, EntityRecord, ReclassifyRequest
from zengram.domain.models import format_timestamp
from zengram.domain.requests import CLIENT_PATTERN

router = APIRouter(tags=["entities"], responses=ERROR_RESPONSES)


def _entity_body(entity: EntityRecord) -> EntityBody:
    return EntityBody(name=entity.name, type=entity.type.value, mention_count=entity.mention_count,
                      first_seen=format_timestamp(entity.first_seen) if entity.first_seen else None,
                      last_seen=format_timestamp(entity.last_seen) if entity.last_seen else None)


@router.get("/entities", response_model=EntityListBody)
def list_entities(request: Annotated[EntityListRequest, Query()], entities: EntityServiceDep,
                  scope: ScopeDep) -> EntityListBody:
    found = entities.list_entities(request.type, request.limit, request.offset, scope)
    return EntityListBody(count=len(found), offset=request.offset, limit=request.limit,
                          type=request.type.value if request.type else None,
                          entities=[_entity_body(entity) for entity in found])


@router.get("/entities/stats", response_model=EntityStatsBody)
def entity_stats(entities: EntityServiceDep, scope: ScopeDep) -> EntityStatsBody:
    stats = entities.stats(scope=scope)
    return EntityStatsBody(total=stats.total, by_type=stats.by_type,
                           top_mentioned=[_entity_body(entity) for entity in stats.top_mentioned])


@router.post("/entities/reclassify", response_model=ReclassifyBody)
def reclassify_entities(body: ReclassifyRequest, entities: EntityServiceDep) -> ReclassifyBody:
    report = entities.reclassify(body)
    return ReclassifyBody(
        dry_run=report.dry_run,
        changes=[ReclassifyChangeBody(entity=change.name, old_type=change.old_type.value,
                                      new_type=change.new_type.value, memories_affected=change.memories_affected)
                 for change in report.changes],
        unchanged=report.unchanged, not_found=report.not_found, memories_updated=report.memories_updated,
        indexed=report.indexed, event_id=report.event_id,
    )


@router.get("/entities/{name}", response_model=EntityDetailBody,
            responses=ENTITY_NOT_FOUND)
def get_entity(name: str, entities: EntityServiceDep, scope: ScopeDep) -> EntityDetailBody:
    detail = entities.detail(name, scope)
    return EntityDetailBody(
        **_entity_body(detail.entity).model_dump(), aliases=detail.aliases,
        related=[RelatedEntityBody(name=edge.name, strength=edge.strength) for edge in detail.related],
    )


@router.get("/entities/{name}/memories", response_model=EntityMemoriesBody, responses=ENTITY_NOT_FOUND)
def entity_memories(name: str, request: Annotated[EntityMemoriesRequest, Query()], entities: EntityServiceDep,
                    scope: ScopeDep,
                    client_id: Annotated[str | None, Query(pattern=CLIENT_PATTERN,
                                                           description="Only this client's memories")] = None,
                    ) -> EntityMemoriesBody:
    entity, memories = entities.memories(name, request.limit, client_id, scope)
    return EntityMemoriesBody(entity=entity.name, type=entity.type.value, count=len(memories),
                              memories=[CompactRecord.of(memory) for memory in memories])
