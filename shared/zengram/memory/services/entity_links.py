"""Entities at write time: extraction from a memory's text, and keeping the registry's links in step with records.

Both the memory writes (MemoryService, KnowledgeService's import) and the /entities views (EntityService) use it;
it depends on neither, so the services form no cycle.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from zengram.memory.domain.clients import ClientFingerprint
from zengram.memory.domain.entities import (
    EntityRef,
    EntityType,
    canonical_entity_name,
    entity_key,
    extract_entities,
    with_writers,
)
from zengram.memory.domain.models import Memory
from zengram.memory.ports import EntityStore
from zengram.memory.services.cache import Expiring

_KNOWN_AGENTS_LIMIT = 500


class EntityLinker:
    """Finds entities in memories (no LLM) and links memories to them in the registry.

    `known_clients` lists client fingerprints (the ClientService caches them and drops its cache on every PUT).
    """

    def __init__(self, entities: EntityStore, *, known_clients: Callable[[], Sequence[ClientFingerprint]] = list,
                 cache_seconds: float, writer_entities: bool = True,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._entities = entities
        self._writer_entities = writer_entities
        self.known_clients = known_clients
        self._agents = Expiring(self._registered_agents, cache_seconds, monotonic)

    def extract(self, text: str, source_agent: str, client_id: str | None = None) -> list[EntityRef]:
        """The entities `text` names, and (`writer_entities`) the memory's own client and agent; an entity the
        registry knows keeps the registry's name and type (so a reclassification sticks for later memories)."""
        found = extract_entities(text, self.known_clients(), [*self._agents.get(), source_agent])
        if self._writer_entities:
            found = with_writers(found, client_id, source_agent)
        registered = self._entities.get_many([ref.key for ref in found]) if found else {}
        return [ref.model_copy(update={"name": registered[ref.key].name, "type": registered[ref.key].type})
                if ref.key in registered else ref for ref in found]

    def link(self, memory: Memory) -> None:
        """Makes the registry hold this memory's entities (none once it is deleted)."""
        entities = [] if memory.is_deleted else memory.entities
        self._entities.set_mentions(memory.id, memory.created_at, entities, memory.updated_at)
        if self._may_change_agents(entities):
            self._agents.invalidate()

    def resolve_key(self, name: str) -> str:
        """The entity key a caller means: aliases and dictionary spellings, then client names and aliases."""
        key = entity_key(canonical_entity_name(name))
        if self._entities.get(key) is None:
            client = self.client_named(name)
            if client is not None:
                return entity_key(client.client_id)
        return key

    def client_named(self, name: str) -> ClientFingerprint | None:
        wanted = entity_key(name)
        for client in self.known_clients():
            if wanted in {entity_key(term) for term in [client.client_id, client.name or "", *client.aliases]}:
                return client
        return None

    def registry_changed(self) -> None:
        """Called after a reclassification, deletion or merge changed the registry: the agents are read again."""
        self._agents.invalidate()

    def _may_change_agents(self, entities: Sequence[EntityRef]) -> bool:
        """Whether linking `entities` may change the registered agents' list. Every write links its own agent: one
        the cached list already holds, below its limit, changes only its order (by mentions), which extraction
        ignores, so the list is not read again for it."""
        agents = [ref.name for ref in entities if ref.type is EntityType.AGENT]
        if not agents:
            return False
        cached = self._agents.peek()
        return cached is None or len(cached) >= _KNOWN_AGENTS_LIMIT or not set(agents) <= set(cached)

    def _registered_agents(self) -> list[str]:
        return [entity.name for entity in self._entities.list_entities(EntityType.AGENT, _KNOWN_AGENTS_LIMIT, 0)]
