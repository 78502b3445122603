"""Graph retrieval: find the code entities a query names, then walk their relations to the chunks that define
or use them.

Scores: the chunk defining a named entity scores 1.0; each hop multiplies by 0.9 when the relation is the one
the query asks about ("what calls X" → CALLS into X) and by 0.45 otherwise. When the query asks about a relation,
the definition itself scores 0.85, so the callers of X rank above X and X above callers of callers. A walk
reaches a module's chunk but does not go on through it (every definition of a file is two hops apart there).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from zengram.documents.domain.models import CodeEntity, EntityKind, Relation, RelationType, target_key
from zengram.kernel.text import STOP_WORDS

# Bounds that keep a walk from a common name cheap: the best entities go on, the rest only score their chunks.
SEEDS_MAX = 20
FRONTIER_PER_HOP = 40
RELATIONS_PER_HOP = 400
MATCHING_HOP = 0.9
OTHER_HOP = 0.45
SEED = 1.0
SEED_WITH_INTENT = 0.85

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*")
_INTENT_WORDS = frozenset(
    """call calls called calling caller callers invoke invokes invoked invoking use uses used using usage usages
    import imports imported importing importer importers inherit inherits inherited inheriting extend extends
    extended subclass subclasses derive derives derived base class classes contain contains member members method
    methods function functions define defines defined definition where find show list code""".split()
)


@dataclass(frozen=True)
class Intent:
    """The relation a query asks about, and from which side: "what calls X" is CALLS, incoming to X."""

    types: frozenset[RelationType]
    incoming: bool


def query_intent(query: str) -> Intent | None:
    text = query.lower()
    if re.search(r"\b(call(s|ed|er|ers|ing)?|invok\w*|us(es|ed|age|ages|ing))\b", text):
        outgoing = bool(re.search(r"\bdoes\b.*\b(call|invoke|use)\b", text))
        return Intent(frozenset({RelationType.CALLS}), incoming=not outgoing)
    if re.search(r"\bimport(s|ed|er|ers|ing)?\b", text):
        return Intent(frozenset({RelationType.IMPORTS}), incoming=True)
    if re.search(r"\b(inherit\w*|extend\w*|subclass\w*|deriv\w*)\b", text):
        return Intent(frozenset({RelationType.INHERITS, RelationType.EXTENDS}), incoming=True)
    if re.search(r"\b(contain\w*|members?|methods? of)\b", text):
        return Intent(frozenset({RelationType.CONTAINS}), incoming=False)
    return None


def candidate_names(query: str) -> list[list[str]]:
    """Lower-cased names the query may mean, most specific first, in tiers: identifiers as written in code
    (`compute_total`, `Cart.total` and its `total`, `formatMoney`), then adjacent plain words joined the way
    identifiers are (`compute total` → `compute_total`, `computetotal`), then plain words. The first tier that
    names an entity is the one used, so "how are request headers parsed" does not start from every `request`."""
    tokens = [token for token in _IDENTIFIER.findall(query)
              if token.lower() not in STOP_WORDS and token.lower() not in _INTENT_WORDS]
    words = [token.lower() for token in tokens if token.isalpha() and len(token) > 2]
    tiers = [_distinct_names(tier) for tier in (_code_names(tokens), _joined_words(query), words)]
    return [tier for tier in tiers if tier]


def _distinct_names(names: list[str]) -> list[str]:
    """The names longer than one character, each once, in order."""
    return list(dict.fromkeys(name for name in names if len(name) > 1))


def _code_names(tokens: list[str]) -> list[str]:
    """The tokens written as code, each as written (`cart.total`) and as its target key (`total`)."""
    return [name for token in tokens if _looks_like_code(token)
            for name in (token.lower().replace("::", "."), target_key(token))]


def _joined_words(query: str) -> list[str]:
    """Each two adjacent plain words of the query (no stop word) joined as identifiers are: `a_b`, `ab`."""
    plain = [token.lower() for token in _IDENTIFIER.findall(query) if token.isalpha()]
    return [name for first, second in itertools.pairwise(plain)
            if first not in STOP_WORDS and second not in STOP_WORDS
            for name in (f"{first}_{second}", f"{first}{second}")]


def _looks_like_code(token: str) -> bool:
    return any(mark in token for mark in ("_", ".", "::")) or any(char.isdigit() for char in token) \
        or any(char.isupper() for char in token[1:])


@dataclass(frozen=True)
class GraphHit:
    chunk_id: str
    score: float
    path: tuple[str, ...]


@dataclass(frozen=True)
class GraphReader:
    """What a walk reads from the graph store (the `GraphStore` port's methods)."""

    named: Callable[[Sequence[str], int], list[CodeEntity]]
    entities: Callable[[Sequence[str]], dict[str, CodeEntity]]
    relations_to: Callable[[Sequence[str], int], list[Relation]]
    relations_from: Callable[[Sequence[str], int], list[Relation]]


Path = tuple[str, ...]  # the qualified names and relations a walk went through
Frontier = dict[str, tuple[CodeEntity, float, Path]]  # entity id → (entity, its score, the path to it)
Reached = dict[str, tuple[float, Path]]  # entity id → (its best score in this hop, the path that gave it)


def walk(seeds: Sequence[CodeEntity], depth: int, intent: Intent | None, graph: GraphReader) -> list[GraphHit]:
    """Breadth-first over `depth` hops; each chunk keeps its best score (and the path that gave it)."""
    state = _Walk(intent, graph)
    seed_score = SEED_WITH_INTENT if intent else SEED
    frontier: Frontier = {}
    for entity in seeds:
        state.reach(entity.chunk_id, seed_score, (entity.qualified_name,))
        frontier[entity.id] = (entity, SEED, (entity.qualified_name,))
    visited = set(frontier)
    for _ in range(depth):
        if not frontier:
            break
        reached: Reached = {}
        state.hop_in(frontier, reached)
        state.hop_out(frontier, reached)
        frontier = state.next_frontier(reached, visited)
        visited |= set(frontier)
    return sorted(state.best.values(), key=lambda hit: (-hit.score, hit.chunk_id))


@dataclass
class _Walk:
    """One walk: what it asks about, where it reads, and the best hit of each chunk reached so far."""

    intent: Intent | None
    graph: GraphReader
    best: dict[str, GraphHit] = field(default_factory=dict)

    def reach(self, chunk_id: str, score: float, path: Path) -> None:
        if chunk_id and (chunk_id not in self.best or self.best[chunk_id].score < score):
            self.best[chunk_id] = GraphHit(chunk_id, round(score, 6), path)

    def hop_in(self, frontier: Frontier, reached: Reached) -> None:
        """One hop against the relations: from the entities that point at the frontier's (callers, importers,
        subclasses), matched by name."""
        by_key: dict[str, list[tuple[CodeEntity, float, Path]]] = {}
        for entity, score, path in frontier.values():
            by_key.setdefault(entity.name_key, []).append((entity, score, path))
        for relation in self.graph.relations_to(sorted(by_key), RELATIONS_PER_HOP):
            for entity, score, path in by_key.get(relation.target_key, []):
                if relation.source_entity == entity.id:
                    continue
                hop = score * _weight(relation.type, self.intent, incoming=True)
                step = (*path, f"<-{relation.type.value}-", relation.source_name)
                self.reach(relation.chunk_id, hop, step)
                _keep(reached, relation.source_entity, hop, step)

    def hop_out(self, frontier: Frontier, reached: Reached) -> None:
        """One hop along the relations: to the entities the frontier's point at (what they call, import,
        extend, contain), looked up by name."""
        outgoing = self.graph.relations_from(sorted(frontier), RELATIONS_PER_HOP)
        by_name = self._named({relation.target_key for relation in outgoing}) if outgoing else {}
        for relation in outgoing:
            entity, score, path = frontier[relation.source_entity]
            hop = score * _weight(relation.type, self.intent, incoming=False)
            for target in by_name.get(relation.target_key, []):
                if target.id == entity.id:
                    continue
                step = (*path, f"-{relation.type.value}->", target.qualified_name)
                self.reach(target.chunk_id, hop, step)
                _keep(reached, target.id, hop, step)

    def _named(self, keys: set[str]) -> dict[str, list[CodeEntity]]:
        by_name: dict[str, list[CodeEntity]] = {}
        for target in self.graph.named(sorted(keys), RELATIONS_PER_HOP):
            by_name.setdefault(target.name_key, []).append(target)
        return by_name

    def next_frontier(self, reached: Reached, visited: set[str]) -> Frontier:
        """The best entities reached for the first time go on (at most `FRONTIER_PER_HOP`). A module is where a
        walk stops: everything in a file is two hops apart through it."""
        fresh = sorted((entity_id for entity_id in reached if entity_id not in visited),
                       key=lambda entity_id: (-reached[entity_id][0], entity_id))[:FRONTIER_PER_HOP]
        found = self.graph.entities(fresh) if fresh else {}
        return {entity_id: (found[entity_id], *reached[entity_id]) for entity_id in fresh
                if entity_id in found and found[entity_id].kind is not EntityKind.MODULE}


def _keep(reached: Reached, entity_id: str, score: float, path: Path) -> None:
    if entity_id not in reached or reached[entity_id][0] < score:
        reached[entity_id] = (score, path)


def _weight(relation: RelationType, intent: Intent | None, *, incoming: bool) -> float:
    if intent is not None and relation in intent.types and intent.incoming == incoming:
        return MATCHING_HOP
    return OTHER_HOP
