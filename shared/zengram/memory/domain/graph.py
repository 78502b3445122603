"""The graph path's ranking, as upstream Zengram v4 does it: the entities a query names score 1.0; their
strongest co-occurrence neighbours (one hop) score `hop_decay` × their edge strength relative to the strongest
kept edge, so a neighbour never outranks a named entity; a memory scores the sum of the scores of the
entities it mentions. Pure: the registry's edges and links are passed in.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from zengram.memory.domain.entities import EntityType, RelatedEntity, entity_key

# Every memory is linked to its writer's client and agent (`ZENGRAM_WRITER_ENTITIES`), so they co-occur with
# everything that writer stored: one hop into them would pull in a whole client. The graph path steps onto them
# only when the query names them.
HUB_TYPES = frozenset({EntityType.CLIENT, EntityType.AGENT})


@dataclass(frozen=True)
class GraphPolicy:
    """Whether the graph path runs and how far it reaches. The defaults are the product's (Settings takes them
    from here) and upstream's; the path's weight in fusion is `ScoringConfig.graph_weight` (0.1, not upstream's
    0.5)."""

    enabled: bool = False  # off: ±0 recall@10 on LoCoMo (bench/recall/RESULTS.md, "Retrieval extras")
    hop_decay: float = 0.5  # a neighbour's score at the strongest kept edge (named entities score 1.0)
    neighbour_limit: int = 12  # the strongest edges kept across all named entities: hubs cannot pull in the world
    memories_per_entity: int = 200  # the newest links read per entity


DEFAULT_GRAPH = GraphPolicy()


def entity_scores(named: Sequence[str], edges: Mapping[str, Sequence[RelatedEntity]],
                  policy: GraphPolicy, hubs: Collection[str] = ()) -> dict[str, float]:
    """Entity key → score: each named key 1.0, then the one-hop neighbours over the strongest
    `neighbour_limit` edges of all named entities (ties: the order `edges` lists them); no hop lands on `hubs`
    (keys of HUB_TYPES entities)."""
    scores = dict.fromkeys(named, 1.0)
    pooled = [(entity_key(edge.name), edge.strength) for key in named for edge in edges.get(key, ())
              if entity_key(edge.name) not in hubs]
    kept = sorted(pooled, key=lambda pair: -pair[1])[:policy.neighbour_limit]
    strongest = max((strength for _, strength in kept), default=0)
    for key, strength in kept:
        if key not in scores or scores[key] < 1.0:
            score = policy.hop_decay * strength / max(strongest, 1)
            scores[key] = max(scores.get(key, 0.0), score)
    return scores


def rank_memories(scores: Mapping[str, float], links: Iterable[tuple[str, Sequence[str]]]) -> list[tuple[str, float]]:
    """(memory id, graph score) best first: a memory's score sums its entities' scores. `links` gives each
    entity key's memory ids (newest first); ties keep the order memories were first seen in."""
    totals: dict[str, float] = {}
    for key, memory_ids in links:
        for memory_id in dict.fromkeys(memory_ids):
            totals[memory_id] = totals.get(memory_id, 0.0) + scores.get(key, 0.0)
    order = {memory_id: position for position, memory_id in enumerate(totals)}
    return sorted(totals.items(), key=lambda pair: (-pair[1], order[pair[0]]))
