"""Entities: the registry extraction fills at write time; reclassification, removal and merging of entities."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Query

from zengram.kernel.identifiers import CLIENT_PATTERN
from zengram.kernel.timestamps import format_timestamp
from zengram.memory.api.deps import EntityServiceDep
from zengram.memory.api.schemas import CONFLICT
from zengram.memory.api.schemas.entities import (
    ENTITY_NOT_FOUND,
    EntityBody,
    EntityDeletedBody,
    EntityDetailBody,
    EntityGraphBody,
    EntityListBody,
    EntityMemoriesBody,
    EntityMergedBody,
    EntityStatsBody,
    GraphEdgeBody,
    GraphNodeBody,
    MemoryLinkBody,
    ReclassifyBody,
    ReclassifyItemBody,
    RelatedEntityBody,
)
from zengram.memory.api.schemas.records import CompactRecord
from zengram.memory.domain.entities import (
    EntityGraphRequest,
    EntityListRequest,
    EntityMemoriesRequest,
    EntityRecord,
    MergeRequest,
    ReclassifyRequest,
    entity_key,
)
from zengram.web.access import ScopeDep
from zengram.web.schemas import ERROR_RESPONSES

if TYPE_CHECKING:  # types only: the service is built (and imported) with the container
    from zengram.memory.services.entities import ReclassifyReport

router = APIRouter(tags=["entities"], responses=ERROR_RESPONSES)

MENTIONED = "mentioned"  # the role of every memory link: extraction records no finer one


@router.get("/entities", response_model=EntityListBody)
def list_entities(request: Annotated[EntityListRequest, Query()], entities: EntityServiceDep,
                  scope: ScopeDep) -> EntityListBody:
    found = entities.list_entities(request.type, request.limit, request.offset, scope)
    return EntityListBody(count=len(found), offset=request.offset, limit=request.limit,
                          type=request.type.value if request.type else None,
                          entities=[EntityBody.of(entity) for entity in found])


@router.get("/entities/stats", response_model=EntityStatsBody)
def entity_stats(entities: EntityServiceDep, scope: ScopeDep) -> EntityStatsBody:
    stats = entities.stats(scope=scope)
    return EntityStatsBody(total=stats.total, by_type=stats.by_type,
                           top_mentioned=[EntityBody.of(entity) for entity in stats.top_mentioned])


@router.get("/entities/graph", response_model=EntityGraphBody, response_model_exclude_none=True)
def entity_graph(request: Annotated[EntityGraphRequest, Query()], entities: EntityServiceDep,
                 scope: ScopeDep) -> EntityGraphBody:
    """The most mentioned entities and how often they are named together (co-occurrence): the dashboard's
    picture. A key limited to some clients gets the graph of their memories only."""
    graph = entities.graph(request.type, request.limit, request.min_strength, scope)
    return EntityGraphBody(
        node_count=len(graph.nodes), edge_count=len(graph.edges), limit=request.limit,
        min_strength=request.min_strength, type=request.type.value if request.type else None,
        nodes=[_graph_node(node) for node in graph.nodes],
        edges=[GraphEdgeBody(source=edge.source, target=edge.target, strength=edge.strength)
               for edge in graph.edges],
    )


def _graph_node(entity: EntityRecord) -> GraphNodeBody:
    listed = EntityBody.of(entity, aliases=[])
    return GraphNodeBody(id=entity_key(entity.name), canonical_name=entity.name, entity_type=listed.type,
                         mention_count=listed.mention_count, first_seen=listed.first_seen, last_seen=listed.last_seen)


@router.post("/entities/reclassify", response_model=ReclassifyBody)
def reclassify_entities(body: ReclassifyRequest, entities: EntityServiceDep) -> ReclassifyBody:
    report = entities.reclassify(body)
    items = _reclassify_items(report, body)
    return ReclassifyBody(
        preview=items if report.dry_run else None, applied=False if report.dry_run else items,
        dry_run=report.dry_run, unchanged=report.unchanged, not_found=report.not_found,
        memories_updated=report.memories_updated, indexed=report.indexed, event_id=report.event_id,
    )


def _reclassify_items(report: ReclassifyReport, body: ReclassifyRequest) -> list[ReclassifyItemBody]:
    """Upstream's items: each change, and each name not found (with its error)."""
    changes = [ReclassifyItemBody(name=change.name, old_type=change.old_type.value, new_type=change.new_type.value,
                                  memories_affected=change.memories_affected) for change in report.changes]
    wanted = {item.name: item.new_type.value for item in body.reclassifications}
    missing = [ReclassifyItemBody(name=name, old_type=None, new_type=wanted[name], memories_affected=0,
                                  error="Entity not found") for name in report.not_found]
    return changes + missing


@router.get("/entities/{name}", response_model=EntityDetailBody,
            responses=ENTITY_NOT_FOUND)
def get_entity(name: str, entities: EntityServiceDep, scope: ScopeDep) -> EntityDetailBody:
    detail = entities.detail(name, scope)
    return EntityDetailBody(
        **EntityBody.of(detail.entity, detail.aliases).model_dump(),
        related=[RelatedEntityBody(name=edge.name, strength=edge.strength) for edge in detail.related],
    )


@router.delete("/entities/{name}", response_model=EntityDeletedBody, responses={**ENTITY_NOT_FOUND, **CONFLICT})
def delete_entity(name: str, entities: EntityServiceDep) -> EntityDeletedBody:
    """Every memory stops naming the entity, then the registry forgets it (memories themselves stay)."""
    removal = entities.delete(name)
    body = EntityBody.of(removal.entity)
    return EntityDeletedBody(name=body.canonical_name, type=body.entity_type, id=body.id,
                             memories_updated=removal.memories_updated)


@router.post("/entities/{name}/merge", response_model=EntityMergedBody, responses=ENTITY_NOT_FOUND)
def merge_entities(name: str, body: MergeRequest, entities: EntityServiceDep) -> EntityMergedBody:
    """The memories naming `merge_from` name this entity instead; `merge_from` leaves the registry."""
    merge = entities.merge(name, body.merge_from)
    return EntityMergedBody(primary=merge.primary.name, absorbed=merge.absorbed.name, links_moved=merge.links_moved,
                            alias_created=False, memories_updated=merge.links_moved)


@router.get("/entities/{name}/memories", response_model=EntityMemoriesBody, responses=ENTITY_NOT_FOUND)
def entity_memories(name: str, request: Annotated[EntityMemoriesRequest, Query()], entities: EntityServiceDep,
                    scope: ScopeDep,
                    client_id: Annotated[str | None, Query(pattern=CLIENT_PATTERN,
                                                           description="Only this client's memories")] = None,
                    ) -> EntityMemoriesBody:
    entity, memories = entities.memories(name, request.limit, client_id, scope)
    return EntityMemoriesBody(
        entity=entity.name, entity_type=entity.type.value, type=entity.type.value, count=len(memories),
        memory_links=[MemoryLinkBody(memory_id=memory.id, role=MENTIONED,
                                     created_at=format_timestamp(memory.created_at)) for memory in memories],
        memories=[CompactRecord.of(memory) for memory in memories],
    )
