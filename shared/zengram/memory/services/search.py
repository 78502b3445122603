"""The search use case behind POST /memory/search, in four steps: a plan (the index filters, which paths run and
how many hits each fetches), the retrieval paths run in parallel, their hits fused and ranked against the record
store (then re-ranked when a re-ranker is on), and the result with upstream Zengram's `retrieval` block."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import Any

from zengram.kernel.errors import IndexUnavailable
from zengram.kernel.fusion import Candidate, fuse
from zengram.kernel.keys import TenantScope
from zengram.kernel.outbox import describe_error
from zengram.kernel.ports import Clock, SearchIndex
from zengram.kernel.search import IndexHit, SearchFilters
from zengram.memory.domain.models import Memory
from zengram.memory.domain.query import candidate_boosts
from zengram.memory.domain.query_plan import DEFAULT_QUERY_EXTRAS, QueryPlan, plan_query
from zengram.memory.domain.requests import SearchRequest
from zengram.memory.domain.scoring import ScoredMemory, ScoringConfig, score_candidates
from zengram.memory.ports import RecordStore
from zengram.memory.services.embedding import QueryVectorCache
from zengram.memory.services.indexing import IndexSync
from zengram.memory.services.retrieval import RetrievalExtras

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SearchResult:
    query: str
    hits: list[ScoredMemory]
    multi_path: bool
    path_counts: dict[str, int]
    failed_paths: list[str] = field(default_factory=list)  # paths that could not answer: results are degraded
    expanded_query: str | None = None  # the key-term query of the retry, when the query itself found nothing
    plan: QueryPlan | None = None  # the query-time extras applied (temporal window and boost, expansion)
    reranked: bool | None = None  # whether the re-ranker re-scored the hits (None: none configured)

    def retrieval(self) -> dict[str, Any]:
        """Upstream Zengram's `retrieval` block: the paths and their hit counts, and the extras applied."""
        block: dict[str, Any] = {"multi_path": self.multi_path, "paths": self.path_counts}
        if self.reranked is not None:
            block["reranked"] = self.reranked
        return {**block, **(self.plan.wire() if self.plan is not None else {})}

    @property
    def degraded_reason(self) -> str | None:
        """Upstream Zengram's `retrieval.reason` for a search that answered without some of its paths."""
        return f"{self.failed_paths[0]}_search_unavailable" if len(self.failed_paths) == 1 else None


@dataclass(frozen=True)
class SearchPolicy:
    """How searches run: `search_paths` ("vector" or "keyword" pins one path; anything else runs both),
    `path_fetch` (how many hits a path fetches at most beyond the limit) and the `scoring`."""

    scoring: ScoringConfig
    search_paths: str
    path_fetch: int


@dataclass(frozen=True)
class SearchPlan:
    """What one search asks of the paths: the query's extras (`query`), the index `filters`, how many hits each
    path fetches, and which paths run."""

    request: SearchRequest
    scope: TenantScope
    query: QueryPlan
    filters: SearchFilters
    fetch: int
    use_vector: bool
    use_keyword: bool

    @property
    def multi_path(self) -> bool:
        return self.use_vector and self.use_keyword

    @property
    def path_names(self) -> list[str]:
        return [path for path, used in (("vector", self.use_vector), ("keyword", self.use_keyword)) if used]

    def wanted(self, memory: Memory) -> bool:
        """Whether a found memory may be a hit: the record's own fields (not the index's) match the request and
        `scope`, and it lies in the query's temporal window."""
        return _still_matches(memory, self.request, self.scope) and self.query.keeps(memory)


def plan_search(request: SearchRequest, scope: TenantScope, query: QueryPlan, policy: SearchPolicy,
                entity_key: str | None) -> SearchPlan:
    """The plan of one search. An entity filter (`entity_key`: the entity the request names, resolved) narrows
    it to the vector path, as Zengram does; `policy.search_paths` may pin one path."""
    return SearchPlan(
        request, scope, query, _index_filters(request, scope, query, entity_key),
        fetch=max(request.limit, min(2 * request.limit, policy.path_fetch)),
        use_vector=policy.search_paths != "keyword" or request.entity is not None,
        use_keyword=policy.search_paths != "vector" and request.entity is None,
    )


def _index_filters(request: SearchRequest, scope: TenantScope, query: QueryPlan,
                   entity_key: str | None) -> SearchFilters:
    """The request's filters as the index takes them, narrowed to `scope`'s clients and the query's dates."""
    tenants = scope.narrow(request.client_id)
    return SearchFilters(
        type=request.type.value if request.type else None,
        source_agent=request.source_agent,
        client_id=tenants.client_id,
        client_ids=tenants.client_ids,
        category=request.category.value if request.category else None,
        knowledge_category=request.knowledge_category.value if request.knowledge_category else None,
        entity=entity_key,
        include_inactive=request.include_superseded,
        at_time=request.at_time,
        date_from=query.date_from,
        date_to=query.date_to,
    )


@dataclass
class PathHits:
    """The hits of each path that answered, and why each path that failed did."""

    hits: dict[str, list[IndexHit]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)

    def run(self, name: str, search: Callable[[], list[IndexHit]], *, degrades: bool = True) -> None:
        """Runs one retrieval path; a path that fails is left out (the search goes on with the others) and
        logged, and noted as failed when its failure `degrades` the search."""
        try:
            self.hits[name] = search()
        except Exception as error:
            logger.warning("%s search path failed; answering without it: %s", name, describe_error(error))
            if degrades:
                self.failed[name] = describe_error(error)

    def candidates(self) -> dict[str, Candidate]:
        """The paths' hits fused into one candidate per memory (`ScoringConfig.fusion`)."""
        return fuse({path: [(hit.id, hit.score) for hit in hits] for path, hits in self.hits.items()})


class MemorySearch:
    """Vector and keyword paths (and the graph path, when on) in parallel, fused, ranked by `effective_score`,
    then re-ranked when a re-ranker is on. The index filters; the record store has the last word."""

    def __init__(self, records: RecordStore, index: SearchIndex, index_sync: IndexSync, queries: QueryVectorCache,
                 executor: Executor, clock: Clock, policy: SearchPolicy, extras: RetrievalExtras | None) -> None:
        self._records = records
        self._index = index
        self._index_sync = index_sync
        self._queries = queries
        self._executor = executor
        self._clock = clock
        self._policy = policy
        self._extras = extras

    def once(self, request: SearchRequest, scope: TenantScope, entity_key: str | None) -> SearchResult:
        """One search (no retry): planned, its paths run, ranked, then answered."""
        plan = self._plan(request, scope, entity_key)
        self._searchable(request.q, plan.path_names)
        found = self._run_paths(plan)
        hits, reranked = self._rank(plan, found)
        return SearchResult(
            query=request.q,
            hits=hits[: request.limit],
            multi_path=plan.multi_path,
            path_counts={path: len(path_hits) for path, path_hits in found.hits.items()},
            failed_paths=list(found.failed),
            plan=plan.query,
            reranked=reranked,
        )

    def _plan(self, request: SearchRequest, scope: TenantScope, entity_key: str | None) -> SearchPlan:
        """The query's extras (temporal window and boost, expansion: docs/retrieval-extras.md) and the plan."""
        extras = self._extras.query if self._extras else DEFAULT_QUERY_EXTRAS
        query = plan_query(request.q, extras, now=self._clock.now(), reference_date=request.reference_date,
                           at_time=request.at_time, date_from=request.date_from, date_to=request.date_to)
        return plan_search(request, scope, query, self._policy, entity_key)

    def _searchable(self, query: str, paths: list[str]) -> None:
        """Refuses an index built with another model (503 until reindexed); one that cannot be asked is a 503
        with upstream's `retrieval` flags."""
        try:
            self._index_sync.ensure_compatible()
        except IndexUnavailable as error:
            raise _search_unavailable(query, str(error), paths) from error

    def _run_paths(self, plan: SearchPlan) -> PathHits:
        """The keyword and graph paths run on the executor while the vector path runs here. Only when every
        path the plan runs failed does the search fail (503); the graph path is additive: its failure never
        fails nor degrades the search."""
        q, filters, fetch = plan.request.q, plan.filters, plan.fetch
        keyword = self._executor.submit(self._index.keyword_search, q, filters, fetch) if plan.use_keyword else None
        graph = self._graph_path(plan)
        found = PathHits()
        if plan.use_vector:
            found.run("vector", lambda: self._index.vector_search(self._queries.vector(plan.query.vector_text),
                                                                  filters, fetch))
        if keyword is not None:
            found.run("keyword", keyword.result)
        if found.failed and not found.hits:
            raise _search_unavailable(q, "; ".join(found.failed.values()), list(found.failed))
        if graph is not None:
            found.run("graph", graph.result, degrades=False)
        return found

    def _graph_path(self, plan: SearchPlan) -> Future[list[IndexHit]] | None:
        """The graph path, started when on and both other paths run; it takes the raw query (no expansion)."""
        graph = self._extras.graph if self._extras is not None and plan.multi_path else None
        if graph is None:
            return None
        return self._executor.submit(graph.search, plan.request.q, plan.wanted, plan.fetch)

    def _rank(self, plan: SearchPlan, found: PathHits) -> tuple[list[ScoredMemory], bool | None]:
        """The fused candidates whose records the plan wants, scored (with the query's boosts), then re-ranked;
        with whether the re-ranker re-scored them (None: none configured)."""
        candidates = found.candidates()
        memories = {
            memory_id: memory
            for memory_id, memory in self._records.get_many(list(candidates)).items()
            if plan.wanted(memory) and _names_entity(memory, plan.filters.entity)
        }
        boosts = self._boosts(plan, memories)
        scored = score_candidates(candidates, memories, now=self._clock.now(), multi_path=plan.multi_path,
                                  config=self._policy.scoring, boosts=boosts)
        rerank = self._extras.rerank if self._extras is not None else None
        if rerank is None:
            return scored, None
        return rerank.apply(plan.request.q, scored, plan.request.limit)

    def _boosts(self, plan: SearchPlan, memories: dict[str, Memory]) -> dict[str, float]:
        """Each candidate's score multiplier: the query's term boosts, times the temporal boost when planned."""
        boosts = candidate_boosts(plan.request.q, memories, self._policy.scoring.query_boosts())
        if plan.query.boost_reference is None:
            return boosts
        return {memory_id: boosts.get(memory_id, 1.0) * plan.query.boost(memory)
                for memory_id, memory in memories.items()}


def _search_unavailable(query: str, why: str, paths: list[str]) -> IndexUnavailable:
    """No path could answer: 503, shaped like upstream Zengram's (`query`, `retrieval.degraded`)."""
    return IndexUnavailable(
        f"Search unavailable: {why}. Memories are still stored and readable (GET /memory/query, "
        "GET /memory/{id}); searches work again once the index is back.",
        details={"query": query, "retrieval": {"degraded": True, "reason": "search_index_unavailable",
                                               "failed_paths": paths}},
    )


def _still_matches(memory: Memory, request: SearchRequest, scope: TenantScope) -> bool:
    """The record store has the last word: a stale index entry never leaks a deleted, superseded
    or other-tenant memory into results."""
    if memory.is_deleted or not scope.allows(memory.client_id):
        return False
    if request.at_time is not None:
        if not memory.valid_at(request.at_time):
            return False
    elif not memory.active and not request.include_superseded:
        return False
    checks = {
        "type": request.type, "source_agent": request.source_agent, "client_id": request.client_id,
        "category": request.category, "knowledge_category": request.knowledge_category,
    }
    return all(wanted is None or getattr(memory, name) == wanted for name, wanted in checks.items())


def _names_entity(memory: Memory, key: str | None) -> bool:
    """The record has the last word on entities too (a PATCH may have dropped one the index still lists)."""
    return key is None or any(ref.key == key for ref in memory.entities)
