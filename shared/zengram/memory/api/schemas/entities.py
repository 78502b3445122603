"""Entity endpoint bodies (/entities)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from zengram.kernel.timestamps import format_timestamp
from zengram.memory.api.schemas.records import CompactRecord
from zengram.memory.domain.entities import EntityRecord, aliases_of, entity_key
from zengram.web.schemas import documented_error, left_out

# -- entities -------------------------------------------------------------------------------------------------


class EntityBody(BaseModel):
    """An entity as upstream's registry rows give it (`id`, `canonical_name`, `entity_type`, …); `name` and
    `type` repeat the name and type as our earlier clients read them. The id is the registry's key."""

    id: str
    canonical_name: str
    entity_type: str
    first_seen: str | None
    last_seen: str | None
    mention_count: int
    aliases: list[str]
    name: str
    type: str

    @classmethod
    def of(cls, entity: EntityRecord, aliases: list[str] | None = None) -> EntityBody:
        return cls(id=entity_key(entity.name), canonical_name=entity.name, entity_type=entity.type.value,
                   first_seen=format_timestamp(entity.first_seen) if entity.first_seen else None,
                   last_seen=format_timestamp(entity.last_seen) if entity.last_seen else None,
                   mention_count=entity.mention_count,
                   aliases=aliases if aliases is not None else aliases_of(entity.name),
                   name=entity.name, type=entity.type.value)


class EntityListBody(BaseModel):
    count: int
    offset: int
    limit: int
    type: str | None = left_out()
    entities: list[EntityBody]


class RelatedEntityBody(BaseModel):
    name: str
    strength: int


class EntityDetailBody(EntityBody):
    related: list[RelatedEntityBody]


class EntityStatsBody(BaseModel):
    total: int
    by_type: dict[str, int]
    top_mentioned: list[EntityBody]


class MemoryLinkBody(BaseModel):
    memory_id: str
    role: str  # how the memory names the entity: always "mentioned" (extraction records no finer role)
    created_at: str  # when the memory was written


class EntityMemoriesBody(BaseModel):
    """Upstream's `memory_links`, and the linked memories themselves in compact form (`memories`)."""

    entity: str
    entity_type: str
    type: str
    count: int
    memory_links: list[MemoryLinkBody]
    memories: list[CompactRecord]


class ReclassifyItemBody(BaseModel):
    name: str
    old_type: str | None  # null for an entity not found
    new_type: str
    memories_affected: int
    error: str | None = left_out()  # "Entity not found"


class ReclassifyBody(BaseModel):
    """Upstream's `{preview, applied, dry_run}` (a dry run previews and applies nothing; a real run answers what
    it applied), and our details of the run."""

    preview: list[ReclassifyItemBody] | None = left_out()
    applied: list[ReclassifyItemBody] | Literal[False]
    dry_run: bool
    unchanged: list[str]
    not_found: list[str]
    memories_updated: int
    indexed: bool
    event_id: str | None = left_out()


class EntityDeletedBody(BaseModel):
    deleted: Literal[True] = True
    name: str
    type: str
    id: str
    memories_updated: int  # memories that no longer name it


class EntityMergedBody(BaseModel):
    merged: Literal[True] = True
    primary: str
    absorbed: str
    links_moved: int
    alias_created: bool
    memories_updated: int


ENTITY_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: documented_error("No such entity")}


# -- GET /entities/graph --------------------------------------------------------------------------------------


class GraphNodeBody(BaseModel):
    """An entity as a node; upstream's field names (`canonical_name`, `entity_type`)."""

    id: str  # the entity's key: its canonical name, trimmed and case-folded
    canonical_name: str  # what /entities/{name} and /entities/{name}/memories take
    entity_type: str
    mention_count: int
    first_seen: str | None = None
    last_seen: str | None = None


class GraphEdgeBody(BaseModel):
    source: str  # node ids; the edge has no direction (`source` sorts first)
    target: str
    strength: int  # memories that mention both


class EntityGraphBody(BaseModel):
    node_count: int
    edge_count: int
    limit: int
    min_strength: int
    type: str | None = None
    nodes: list[GraphNodeBody]  # most mentioned first
    edges: list[GraphEdgeBody]  # strongest first
