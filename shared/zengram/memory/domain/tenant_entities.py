"""The entity views of one tenant scope, counted from its own memories.

The entity registry is shared by every tenant, so a key limited to some clients cannot be shown its counts (they
would name other tenants' people and systems). `EntityTally` counts the same things from the scope's memories
instead: mentions = memories naming the entity, first/last seen, co-occurrence strength.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from itertools import combinations

from zengram.memory.domain.entities import EntityRecord, EntityRef, EntityStats, EntityType, GraphEdge, RelatedEntity
from zengram.memory.domain.models import Memory


@dataclass
class _Seen:
    ref: EntityRef  # as the newest memory naming it has it (a reclassification shows there first)
    newest: datetime
    mentions: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None


@dataclass
class EntityTally:
    _seen: dict[str, _Seen] = field(default_factory=dict)
    _edges: Counter[tuple[str, str]] = field(default_factory=Counter)

    @classmethod
    def of(cls, memories: Iterable[Memory]) -> EntityTally:
        """Deleted memories do not count (the registry unlinks them too)."""
        tally = cls()
        for memory in memories:
            if not memory.is_deleted:
                tally._add(memory)
        return tally

    def _add(self, memory: Memory) -> None:
        refs = {ref.key: ref for ref in memory.entities}
        for key, ref in refs.items():
            seen = self._seen.get(key)
            if seen is None:
                seen = self._seen[key] = _Seen(ref, memory.created_at)
            elif memory.created_at >= seen.newest:
                seen.ref, seen.newest = ref, memory.created_at
            seen.mentions += 1
            seen.first_seen = min(seen.first_seen or memory.created_at, memory.created_at)
            seen.last_seen = max(seen.last_seen or memory.updated_at, memory.updated_at)
        self._edges.update(combinations(sorted(refs), 2))

    def get(self, key: str) -> EntityRecord | None:
        seen = self._seen.get(key)
        return self._record(seen) if seen is not None else None

    def records(self, type_: EntityType | None = None) -> list[EntityRecord]:
        """Most mentioned first, then by key (as the registry lists them)."""
        ranked = sorted(self._seen.items(), key=lambda item: (-item[1].mentions, item[0]))
        return [self._record(seen) for _, seen in ranked if type_ is None or seen.ref.type is type_]

    def stats(self, top: int) -> EntityStats:
        records = self.records()
        return EntityStats(total=len(records), by_type=dict(Counter(record.type.value for record in records)),
                           top_mentioned=records[:top])

    def related(self, key: str, limit: int) -> list[RelatedEntity]:
        """Strongest first, then by name."""
        edges = [(other, strength) for pair, strength in self._edges.items() if key in pair
                 for other in pair if other != key]
        related = [RelatedEntity(name=self._seen[other].ref.name, strength=strength) for other, strength in edges]
        return sorted(related, key=lambda edge: (-edge.strength, edge.name))[:limit]

    def edges_among(self, keys: Iterable[str], min_strength: int = 1) -> list[GraphEdge]:
        """The co-occurrence edges whose both ends are among `keys`."""
        wanted = set(keys)
        return [GraphEdge.between(one, other, strength) for (one, other), strength in self._edges.items()
                if one in wanted and other in wanted and strength >= min_strength]

    @staticmethod
    def _record(seen: _Seen) -> EntityRecord:
        return EntityRecord(name=seen.ref.name, type=seen.ref.type, mention_count=seen.mentions,
                            first_seen=seen.first_seen, last_seen=seen.last_seen)
