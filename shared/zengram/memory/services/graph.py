"""The graph path: a third retrieval path over the entity registry (upstream Zengram v4's graph retrieval).

The entities the query names (the write path's extractor: dictionary, aliases, known clients, people and
agents), one hop over their co-occurrence edges, and the memories linked to any of them, ranked by
`zengram.memory.domain.graph`. Fused with the vector and keyword paths at `ScoringConfig.graph_weight`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from zengram.kernel.search import IndexHit
from zengram.memory.domain.entities import EntityRef, RelatedEntity, entity_key
from zengram.memory.domain.graph import DEFAULT_GRAPH, HUB_TYPES, GraphPolicy, entity_scores, rank_memories
from zengram.memory.domain.models import Memory
from zengram.memory.ports import EntityStore, RecordStore


class GraphPath:
    """`extract(text)`: the entities a text names (EntityLinker.extract without an agent). Reads at most
    `policy.memories_per_entity` links per entity (newest first): a hub entity's older memories are out of
    its reach."""

    def __init__(self, entities: EntityStore, records: RecordStore, extract: Callable[[str], Sequence[EntityRef]],
                 policy: GraphPolicy = DEFAULT_GRAPH) -> None:
        self._entities = entities
        self._records = records
        self._extract = extract
        self._policy = policy

    def _hubs(self, edges: Mapping[str, Sequence[RelatedEntity]]) -> set[str]:
        """The neighbours that are writers' clients or agents (one read for all of them)."""
        neighbours = {entity_key(edge.name) for related in edges.values() for edge in related}
        found = self._entities.get_many(sorted(neighbours)) if neighbours else {}
        return {key for key, entity in found.items() if entity.type in HUB_TYPES}

    def search(self, query: str, keep: Callable[[Memory], bool], k: int) -> list[IndexHit]:
        """The `k` best memories by graph score that `keep` accepts (the search's filters and tenant scope:
        the registry knows no tenants), best first; none when the query names no known entity."""
        named = list(dict.fromkeys(ref.key for ref in self._extract(query)))
        if not named:
            return []
        edges = {key: self._entities.related(key, self._policy.neighbour_limit) for key in named}
        scores = entity_scores(named, edges, self._policy, hubs=self._hubs(edges))
        ranked = rank_memories(scores, ((key, self._entities.memory_ids(key, self._policy.memories_per_entity))
                                        for key in scores))
        hits: list[IndexHit] = []
        for start in range(0, len(ranked), 2 * k):  # records in rank order, a few pages at most
            page = ranked[start:start + 2 * k]
            found = self._records.get_many([memory_id for memory_id, _ in page])
            hits += [IndexHit(id=memory_id, score=score) for memory_id, score in page
                     if memory_id in found and keep(found[memory_id])]
            if len(hits) >= k:
                break
        return hits[:k]
