"""Entities: the registry's views (/entities), and reclassification. Extraction and linking at write time are the
EntityLinker's (services/entity_links.py)."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from zengram.kernel.errors import Conflict, InvalidInput, NotFound, StaleRevision
from zengram.kernel.keys import TenantScope
from zengram.kernel.ports import Clock
from zengram.memory.domain.entities import (
    EntityGraph,
    EntityRecord,
    EntityRef,
    EntityStats,
    EntityType,
    GraphEdge,
    ReclassifyRequest,
    RelatedEntity,
    aliases_of,
    entity_key,
)
from zengram.memory.domain.models import Importance, KnowledgeCategory, Memory, MemoryChanges, MemoryType
from zengram.memory.domain.requests import MemoryDraft
from zengram.memory.domain.tenant_entities import EntityTally
from zengram.memory.ports import EntityStore, RecordStore
from zengram.memory.services.entity_links import EntityLinker
from zengram.memory.services.memory import MemoryService

logger = logging.getLogger(__name__)
RECLASSIFY_CHUNK = 100
MEMORY_BATCH = 100  # at most this many records per read (DynamoDB's BatchGetItem limit) when filtering by client
RELATED_LIMIT = 20
_STALE_ATTEMPTS = 5  # retype writes of one memory that keeps changing under the reclassification
EVENT_AGENT = "zengram"


def _graph_edge_fetch(nodes: int) -> int:
    return max(3 * nodes, 100)


@dataclass(frozen=True)
class EntityDetail:
    entity: EntityRecord
    aliases: list[str]
    related: list[RelatedEntity]


@dataclass(frozen=True)
class ReclassifyChange:
    name: str
    old_type: EntityType
    new_type: EntityType
    memories_affected: int


@dataclass(frozen=True)
class EntityRemoval:
    entity: EntityRecord
    memories_updated: int  # memories that no longer name it


@dataclass(frozen=True)
class EntityMerge:
    primary: EntityRecord
    absorbed: EntityRecord
    links_moved: int  # memories that named the absorbed entity and now name the primary one


@dataclass
class ReclassifyReport:
    dry_run: bool
    changes: list[ReclassifyChange] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)  # already of the asked type
    not_found: list[str] = field(default_factory=list)
    memories_updated: int = 0
    indexed: bool = True
    event_id: str | None = None


class EntityService:
    """Answers /entities from the registry (or, for a restricted scope, from the scope's own memories) and
    reclassifies entity types: the registry first, then every linked memory (a record write), its index entry, and
    one event memory stored through `memories`."""

    def __init__(self, links: EntityLinker, entities: EntityStore, records: RecordStore, memories: MemoryService,
                 clock: Clock) -> None:
        self._links = links
        self._entities = entities
        self._records = records
        self._memories = memories
        self._clock = clock

    # -- reads ----------------------------------------------------------------------------------------

    # A restricted scope (an API key's clients) is answered from its own memories (`EntityTally`), not from the
    # registry, which counts every tenant's: one read of the scope's memories per call.

    def list_entities(self, type_: EntityType | None, limit: int, offset: int,
                      scope: TenantScope = TenantScope.EVERYONE) -> list[EntityRecord]:
        if scope.is_restricted:
            return self._tally(scope).records(type_)[offset:offset + limit]
        return self._entities.list_entities(type_, limit, offset)

    def stats(self, top: int = 10, scope: TenantScope = TenantScope.EVERYONE) -> EntityStats:
        if scope.is_restricted:
            return self._tally(scope).stats(top)
        return self._entities.stats(top)

    def detail(self, name: str, scope: TenantScope = TenantScope.EVERYONE) -> EntityDetail:
        if scope.is_restricted:
            key, tally = self._links.resolve_key(name), self._tally(scope)
            entity = tally.get(key)
            if entity is None:
                raise NotFound(f"entity: no entity named '{name}'")
            related = tally.related(key, RELATED_LIMIT)
        else:
            key, entity = self._require(name)
            related = self._entities.related(key, RELATED_LIMIT)
        aliases = aliases_of(entity.name)
        client = next((c for c in self._links.known_clients() if entity_key(c.client_id) == key), None)
        if client is not None and scope.allows(client.client_id):  # another tenant's fingerprint stays its own
            aliases += [term for term in [client.name, *client.aliases] if term and entity_key(term) != key]
        return EntityDetail(entity, sorted(set(aliases), key=str.casefold), related)

    def graph(self, type_: EntityType | None, limit: int, min_strength: int = 1,
              scope: TenantScope = TenantScope.EVERYONE) -> EntityGraph:
        """The `limit` most mentioned entities (of `type_`) and the co-occurrence edges among them: from the
        registry, one read of each node's strongest edges (an edge between two nodes that both have more than
        `_graph_edge_fetch(limit)` stronger ones is left out: a sketch, not an audit); for a restricted scope,
        from one read of the scope's memories (every edge)."""
        if scope.is_restricted:
            tally = self._tally(scope)
            nodes = tally.records(type_)[:limit]
            edges = tally.edges_among([entity_key(node.name) for node in nodes], min_strength)
        else:
            nodes = self._entities.list_entities(type_, limit, 0)
            keys = {entity_key(node.name) for node in nodes}
            found = {GraphEdge.between(key, entity_key(edge.name), edge.strength)
                     for key in keys for edge in self._entities.related(key, _graph_edge_fetch(limit))
                     if entity_key(edge.name) in keys and edge.strength >= min_strength}
            edges = list(found)
        return EntityGraph(nodes=nodes, edges=sorted(edges, key=lambda e: (-e.strength, e.source, e.target)))

    def _tally(self, scope: TenantScope) -> EntityTally:
        return EntityTally.of(self._records.iter_all(client_ids=scope.sorted_clients()))

    def memories(self, name: str, limit: int, client_id: str | None = None,
                 scope: TenantScope = TenantScope.EVERYONE) -> tuple[EntityRecord, list[Memory]]:
        """The entity and its linked memories, newest first (deleted ones are unlinked); with `client_id` (or a
        restricted `scope`), only those tenants' (the registry is shared across tenants, so its links are read
        lazily, newest first, and the records in batches, `limit` ids first and twice as many each round up to
        100, until `limit` of the tenant's are found: a popular entity is not read whole)."""
        tenants = scope.narrow(client_id)
        key, entity = self._require(name)
        wanted = {tenants.client_id} if tenants.client_id is not None else tenants.client_ids
        if wanted is None:
            ids = self._entities.memory_ids(key, limit)
            found = self._records.get_many(ids)
            return entity, [found[i] for i in ids if i in found and not found[i].is_deleted]
        links = self._entities.iter_memory_ids(key, page_size=MEMORY_BATCH)
        kept: list[Memory] = []
        batch = min(limit, MEMORY_BATCH)
        while len(kept) < limit:
            chunk_ids = list(itertools.islice(links, batch))
            if not chunk_ids:
                break
            found = self._records.get_many(chunk_ids)
            kept += [found[i] for i in chunk_ids
                     if i in found and not found[i].is_deleted and found[i].client_id in wanted]
            batch = min(batch * 2, MEMORY_BATCH)
        return entity, kept[:limit]

    # -- reclassification -----------------------------------------------------------------------------

    def reclassify(self, request: ReclassifyRequest) -> ReclassifyReport:
        """Preview (dry run) or apply: the registry's type, then every linked memory's `entities` (a record
        write that marks it for indexing) and its index entry, chunk by chunk, then one event memory."""
        report = ReclassifyReport(dry_run=request.dry_run)
        for item in request.reclassifications:
            key = self._links.resolve_key(item.name)
            entity = self._entities.get(key)
            if entity is None:
                report.not_found.append(item.name)
            elif entity.type is item.new_type:
                report.unchanged.append(entity.name)
                if not request.dry_run:  # finish an interrupted run, or a memory written while one ran
                    self._retype_linked(key, item.new_type, report)
            else:
                report.changes.append(ReclassifyChange(entity.name, entity.type, item.new_type,
                                                       entity.mention_count))
                if not request.dry_run:
                    self._entities.set_type(key, item.new_type)  # first, so memories stored from now on agree
                    self._retype_linked(key, item.new_type, report)
        if not request.dry_run:
            self._links.registry_changed()
        if not request.dry_run and report.changes:
            report.event_id = self._record_event(report)
        return report

    def _retype_linked(self, key: str, new_type: EntityType, report: ReclassifyReport) -> None:
        """Gives every linked memory that still names the entity with another type the new one."""
        def retyped(refs: list[EntityRef]) -> list[EntityRef]:
            return [ref.model_copy(update={"type": new_type}) if ref.key == key else ref for ref in refs]

        updated, report.indexed = self._rewrite_linked(key, retyped, relink=False, indexed=report.indexed)
        report.memories_updated += updated

    # -- removal and merging --------------------------------------------------------------------------

    def delete(self, name: str) -> EntityRemoval:
        """DELETE /entities/{name}: every memory stops naming it (a record write each, then registry and index),
        then the registry forgets it. Conflict when a new memory named it meanwhile."""
        key, entity = self._require(name)
        updated, _ = self._rewrite_linked(key, lambda refs: [ref for ref in refs if ref.key != key])
        removed = self._entities.remove_unlinked(key)
        self._links.registry_changed()
        if not removed:
            raise Conflict(f"entity: a new memory named '{entity.name}' meanwhile; delete it again")
        return EntityRemoval(entity, updated)

    def merge(self, name: str, merge_from: str) -> EntityMerge:
        """POST /entities/{name}/merge: the memories naming `merge_from` name `name` instead, and the absorbed
        entity leaves the registry (a later memory naming it registers it anew: no alias is stored)."""
        primary_key, primary = self._require(name, role="Primary entity")
        absorbed_key, absorbed = self._require(merge_from, role="Source entity")
        if absorbed_key == primary_key:
            raise InvalidInput("merge_from", "names the same entity as the one merged into")
        into = EntityRef(name=primary.name, type=primary.type)

        def moved(refs: list[EntityRef]) -> list[EntityRef]:
            swapped = [into if ref.key == absorbed_key else ref for ref in refs]
            return list({ref.key: ref for ref in reversed(swapped)}.values())[::-1]  # first mention of a key wins

        links, _ = self._rewrite_linked(absorbed_key, moved)
        self._entities.remove_unlinked(absorbed_key)  # a memory naming it meanwhile keeps it: merge again
        self._links.registry_changed()
        merged = self._entities.get(primary_key) or primary
        return EntityMerge(merged, absorbed, links)

    def _rewrite_linked(self, key: str, rewrite: Callable[[list[EntityRef]], list[EntityRef]], *,
                        relink: bool = True, indexed: bool = True) -> tuple[int, bool]:
        """Applies `rewrite` to the `entities` of every memory linked to `key`, chunk by chunk: each a record
        write, then the registry's links (`relink`) and the index entry. Returns (memories changed, indexed)."""
        ids, updated_count = self._entities.memory_ids(key), 0
        for start in range(0, len(ids), RECLASSIFY_CHUNK):
            chunk = self._records.get_many(ids[start:start + RECLASSIFY_CHUNK])
            updated = [memory for memory in (self._rewrite(m, rewrite) for m in chunk.values()) if memory]
            updated_count += len(updated)
            indexed = self._memories.after_change(updated, relink=relink) and indexed
        return updated_count, indexed

    def _rewrite(self, memory: Memory, rewrite: Callable[[list[EntityRef]], list[EntityRef]]) -> Memory | None:
        """Rewrites the memory's `entities` only if it is still at the revision they were computed from; when
        it changed meanwhile (a PATCH with new content re-extracts them), it is read again and rewritten from
        what it holds now, a bounded number of times, so the newer write is never overwritten."""
        current: Memory | None = memory
        for _ in range(_STALE_ATTEMPTS):
            if current is None or current.is_deleted:
                return None
            entities = rewrite(list(current.entities))
            if entities == current.entities:
                return None
            try:
                return self._records.update(current.id, MemoryChanges(entities=entities), self._clock.now(),
                                            expected_revision=current.revision)
            except StaleRevision:
                current = self._records.get(current.id)
            except (Conflict, NotFound):  # deleted (or gone) meanwhile: nothing left to rewrite
                logger.info("entity rewrite skipped memory %s: it changed meanwhile", memory.id)
                return None
        logger.info("entity rewrite skipped memory %s: it kept changing", memory.id)
        return None

    def _record_event(self, report: ReclassifyReport) -> str:
        changes = "; ".join(f"{change.name}: {change.old_type.value} → {change.new_type.value} "
                            f"({change.memories_affected} memories)" for change in report.changes)
        return self._memories.store(MemoryDraft(
            type=MemoryType.EVENT, content=f"Entity reclassification: {changes}", source_agent=EVENT_AGENT,
            importance=Importance.MEDIUM, knowledge_category=KnowledgeCategory.TECHNICAL,
        )).memory.id

    # -- helpers --------------------------------------------------------------------------------------

    def _require(self, name: str, role: str | None = None) -> tuple[str, EntityRecord]:
        key = self._links.resolve_key(name)
        entity = self._entities.get(key)
        if entity is None:
            raise NotFound(f'{role} "{name}" not found' if role else f"entity: no entity named '{name}'")
        return key, entity
