"""The memory context's wiring: its record backend (every store that lives beside the records, built together),
then its services around the shared index and embedder.

The wiring table (`RECORD_BACKENDS`, `JOB_LAUNCHERS`; the shared adapters' `SEARCH_INDEXES` and `EMBEDDERS` are in
`zengram.adapters.factories`) maps each setting's value to the builder of its adapters. A record backend is built
whole by one builder: every store beside the records shares their file (SQLite) or their table and client
(DynamoDB). The two families the product ships: embedded (`sqlite` records + `embedded` index) and AWS (`dynamodb`
records + `opensearch` index). docs/architecture.md tells how to add one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from zengram.adapters.factories import build_search_index, no_language_model
from zengram.kernel.content import Scrubber
from zengram.kernel.parts import SharedParts, closing
from zengram.kernel.ports import Clock, Embedder, LanguageModel, RateLimiter, SearchIndex
from zengram.memory.ports import (
    ApiKeyStore,
    ClientStore,
    CollectionStore,
    ConsolidationWrites,
    EntityStore,
    IndexOutbox,
    JobLauncher,
    JobStore,
    RecordCounters,
    RecordStore,
)
from zengram.memory.services.knowledge import KnowledgeService
from zengram.memory.services.memory import MemoryService
from zengram.memory.settings import MemorySettings

if TYPE_CHECKING:
    from zengram.memory.ports import ResearchRunner
    from zengram.memory.services.clients import ClientService
    from zengram.memory.services.collections import CollectionService
    from zengram.memory.services.consolidation import ConsolidationService
    from zengram.memory.services.entities import EntityService
    from zengram.memory.services.entity_links import EntityLinker
    from zengram.memory.services.health import HealthService
    from zengram.memory.services.keys import KeyService
    from zengram.memory.services.reflect import ReflectService
    from zengram.memory.services.research import ResearchService, ResearchSteps
    from zengram.memory.services.retrieval import RetrievalExtras
    from zengram.memory.services.stats import StatsService


# -- record backends: every store that lives beside the records, built together -------------------------------


@dataclass(frozen=True)
class RecordBackend:
    """The stores of one record backend. The four record ports are one adapter (their writes share a
    transaction); the others share its file or its table and client. `close` releases what they hold."""

    records: RecordStore
    outbox: IndexOutbox
    counters: RecordCounters
    consolidation: ConsolidationWrites
    clients: ClientStore
    collections: CollectionStore
    keys: ApiKeyStore
    jobs: JobStore
    rate_limiter: RateLimiter
    entities: EntityStore
    close: Callable[[], None]


@dataclass(frozen=True)
class BackendFamily:
    """How to build a record backend. `keeps_key_file`: its host keeps a generated API key in the data folder
    (the embedded server), which the credential scrubber may fall back on."""

    build: Callable[[MemorySettings, Clock], RecordBackend]
    keeps_key_file: bool = False


def build_sqlite_backend(settings: MemorySettings, clock: Clock) -> RecordBackend:
    """One SQLite file for the records and every store beside them; the entity registry has a file of its own in
    the data folder (so its writes never queue behind record writes)."""
    from zengram.adapters.sqlite import SQLiteRecordStore
    from zengram.adapters.sqlite.clients import SQLiteClientStore
    from zengram.adapters.sqlite.collections import SQLiteCollectionStore
    from zengram.adapters.sqlite.entities import SQLiteEntityStore
    from zengram.adapters.sqlite.jobs import SQLiteJobStore
    from zengram.adapters.sqlite.keys import SQLiteApiKeyStore
    from zengram.adapters.sqlite.rate_limits import SQLiteRateLimiter

    path = settings.records_path
    records = SQLiteRecordStore(path)
    clients, keys, jobs = SQLiteClientStore(path), SQLiteApiKeyStore(path), SQLiteJobStore(path)
    collections = SQLiteCollectionStore(path)
    rate_limiter = SQLiteRateLimiter(path, clock)
    entities = SQLiteEntityStore(settings.data_dir / "entities.sqlite3")
    return RecordBackend(records=records, outbox=records, counters=records, consolidation=records, clients=clients,
                         collections=collections, keys=keys, jobs=jobs, rate_limiter=rate_limiter, entities=entities,
                         close=closing(records.close, clients.close, collections.close, keys.close, jobs.close,
                                        rate_limiter.close, entities.close))


def build_dynamodb_backend(settings: MemorySettings, clock: Clock, *, client: Any | None = None) -> RecordBackend:
    """One DynamoDB table (and one boto3 client) for the records and every store beside them. `client`: one of the
    caller's own (tests); by default one honouring the region and AWS_ENDPOINT_URL."""
    from zengram.adapters.dynamodb import DynamoDBRecordStore
    from zengram.adapters.dynamodb.clients import DynamoDBClientStore
    from zengram.adapters.dynamodb.collections import DynamoDBCollectionStore
    from zengram.adapters.dynamodb.entities import DynamoDBEntityStore
    from zengram.adapters.dynamodb.jobs import DynamoDBJobStore
    from zengram.adapters.dynamodb.keys import DynamoDBApiKeyStore
    from zengram.adapters.dynamodb.rate_limits import DynamoDBRateLimiter
    from zengram.adapters.dynamodb.table import make_client

    shared = client or make_client(region=settings.aws_region)
    table = settings.dynamodb_table
    records = DynamoDBRecordStore(table, client=shared)
    if settings.dynamodb_create_table:
        records.ensure_table()
    return RecordBackend(
        records=records, outbox=records, counters=records, consolidation=records,
        clients=DynamoDBClientStore(table, client=shared), collections=DynamoDBCollectionStore(table, client=shared),
        keys=DynamoDBApiKeyStore(table, client=shared),
        jobs=DynamoDBJobStore(table, client=shared), rate_limiter=DynamoDBRateLimiter(table, clock, client=shared),
        entities=DynamoDBEntityStore(table, client=shared), close=shared.close,
    )


def build_thread_launcher(settings: MemorySettings) -> JobLauncher:
    from zengram.adapters.system.launcher import ThreadJobLauncher

    return ThreadJobLauncher()


def build_lambda_launcher(settings: MemorySettings) -> JobLauncher:
    from zengram.adapters.aws_lambda import LambdaJobLauncher

    if not settings.consolidation_function:
        raise ValueError("ZENGRAM_CONSOLIDATION_LAUNCHER=lambda needs ZENGRAM_CONSOLIDATION_FUNCTION")
    return LambdaJobLauncher(settings.consolidation_function, region=settings.aws_region)


# -- the wiring table ---------------------------------------------------------------------------------------------

RECORD_BACKENDS: Mapping[str, BackendFamily] = {  # ZENGRAM_RECORD_STORE
    "sqlite": BackendFamily(build_sqlite_backend, keeps_key_file=True),
    "dynamodb": BackendFamily(build_dynamodb_backend),
}
JOB_LAUNCHERS: Mapping[str, Callable[[MemorySettings], JobLauncher]] = {  # ZENGRAM_CONSOLIDATION_LAUNCHER
    "thread": build_thread_launcher,
    "lambda": build_lambda_launcher,
}


def build_record_backend(settings: MemorySettings, clock: Clock) -> RecordBackend:
    return RECORD_BACKENDS[settings.record_store].build(settings, clock)


# -- the container ------------------------------------------------------------------------------------------------


@dataclass
class MemoryContainer:
    """The memory context's services over one record backend, the shared index and embedder."""

    settings: MemorySettings
    backend: RecordBackend
    index: SearchIndex
    embedder: Embedder
    memory: MemoryService
    knowledge: KnowledgeService
    closers: list[Callable[[], None]] = field(default_factory=list)
    llm: LanguageModel = field(default_factory=lambda: no_language_model())
    clients: ClientService = field(kw_only=True)
    rate_limiter: RateLimiter = field(kw_only=True)
    consolidation: ConsolidationService = field(kw_only=True)
    stats: StatsService = field(kw_only=True)
    entities: EntityService = field(kw_only=True)
    keys: KeyService = field(kw_only=True)
    collections: CollectionService = field(kw_only=True)
    clock: Clock = field(kw_only=True)

    def close(self) -> None:
        for close in reversed(self.closers):
            close()

    @property
    def records(self) -> RecordStore:
        return self.backend.records

    @property
    def outbox(self) -> IndexOutbox:
        return self.backend.outbox

    @property
    def counters(self) -> RecordCounters:
        return self.backend.counters

    @cached_property
    def health(self) -> HealthService:
        from zengram.memory.services.health import HealthService

        return HealthService(self.records, self.index, self.embedder)

    @cached_property
    def reflect(self) -> ReflectService:
        from zengram.memory.services.reflect import ReflectService

        return ReflectService(self.memory, self.llm)

    @cached_property
    def research(self) -> ResearchService:
        """Built on first use: only hosts that serve /research (or run its steps) pay for it."""
        return build_research_service(self.settings, self.memory, self.records, self.llm)

    def shared_parts(self) -> SharedParts:
        """What the chat layer shares with the memories: their clock, scrubber, guarded index, embedder, LLM."""
        return SharedParts(self.clock, self.memory.scrubber, self.index, self.embedder, self.llm,
                           self.memory.index_sync.ensure_compatible)


@dataclass(frozen=True)
class MemoryInputs:
    """What the memory context takes from its host: the shared embedder, scrubber and language model (tests,
    benchmarks and the Lambda host bring their own), and the clock."""

    embedder: Embedder
    scrubber: Scrubber
    llm: LanguageModel
    clock: Clock | None = None


AnyContainer = TypeVar("AnyContainer", bound=MemoryContainer)


def build_memory_container(settings: MemorySettings, inputs: MemoryInputs, kind: type[AnyContainer], *,
                           check_index: bool = False) -> AnyContainer:
    """Wires the adapters the settings name, around the host's shared embedder, scrubber and language model.

    Nothing here touches the search index: it is checked (and bound to the embedder) on first use, so a host
    whose index is down still stores and reads records. `check_index=True` checks it now and raises
    EmbeddingMismatch for an index built with another model (the embedded server's start-up, which should
    refuse a wrong configuration at once).

    The services form no cycle: EntityLinker ← MemoryService ← EntityService (a reclassification stores its event
    through the MemoryService), and IndexSync is built first, for all of them.
    """
    from zengram.adapters.system import SystemClock
    from zengram.memory.services.clients import ClientService
    from zengram.memory.services.collections import CollectionService
    from zengram.memory.services.entities import EntityService
    from zengram.memory.services.entity_links import EntityLinker
    from zengram.memory.services.index_guard import GuardedIndex
    from zengram.memory.services.indexing import IndexSync
    from zengram.memory.services.keys import KeyService
    from zengram.memory.services.write_behind import IndexWriteBehind

    clock = inputs.clock or SystemClock()
    embedder, scrubber, llm = inputs.embedder, inputs.scrubber, inputs.llm
    backend = build_record_backend(settings, clock)
    # Only this process serves the embedded index, so only there can its searches wait for writes behind.
    behind = (IndexWriteBehind(settings.index_behind_writes, index_closed=lambda: index.closed_circuit())
              if settings.index_behind_writes and settings.search_index == "embedded" else None)
    index = GuardedIndex(build_search_index(settings), settings.index_circuit(), clock,
                         before_each_call=behind.drain if behind else None)
    executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="zengram-search")
    # Embeddings started ahead of record writes: an import's, and (`embed_beside_writes`) a new memory's. Its
    # tasks wait on nothing but the embedder.
    embed_executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="zengram-embed")
    clients = ClientService(backend.clients, clock, scrubber=scrubber, cache_seconds=settings.client_cache_seconds)
    links = EntityLinker(backend.entities, known_clients=clients.known_clients,
                         cache_seconds=settings.client_cache_seconds, writer_entities=settings.writer_entities)
    index_sync = IndexSync(backend.records, backend.outbox, index, embedder, settings.context_policy(), clock=clock,
                           park_after=settings.index_repair_attempts)
    extras = build_retrieval_extras(settings, backend, links, clock)
    memory = MemoryService(
        backend.records, index_sync, index, embedder, clock, executor,
        scrubber=scrubber, scoring=settings.scoring(), max_observers=settings.max_observers,
        search_paths=settings.search_paths, reinforce_on_search=settings.reinforce_on_search,
        path_fetch=settings.search_path_fetch, resolve_client=clients.resolve, entities=links, extras=extras,
        embed_executor=embed_executor if settings.embed_beside_writes else None, write_behind=behind,
    )
    stats = build_stats_service(settings, backend, index, clock)
    container = kind(
        settings, backend, index, embedder, memory,
        KnowledgeService(backend.records, clock, index_sync, links, scrubber=scrubber, embed_executor=embed_executor,
                         import_chunk=settings.import_embed_chunk),
        # Closed last to first: the writes queued behind their answers are applied before anything they use goes.
        closers=[backend.close, index.close, extras.close, lambda: executor.shutdown(wait=False),
                 lambda: embed_executor.shutdown(wait=False), *([behind.close] if behind else [])],
        llm=llm, clients=clients, rate_limiter=backend.rate_limiter,
        consolidation=build_consolidation_service(settings, backend, memory, index, embedder, llm, clock),
        stats=stats,
        entities=EntityService(links, backend.entities, backend.records, memory, clock),
        keys=KeyService(backend.keys, clock), clock=clock,
        collections=CollectionService(backend.collections, stats, embedder, clock),
    )
    try:
        if check_index:
            index_sync.ensure_compatible()
    except BaseException:
        container.close()
        raise
    return container


def build_key_service(settings: MemorySettings) -> KeyService:
    """Just what verifying a scoped key needs, without the rest of the container: the API Gateway authorizer's.
    The record backend is built whole (its constructors touch no network) for its key store."""
    from zengram.adapters.system import SystemClock
    from zengram.memory.services.keys import KeyService

    clock = SystemClock()
    return KeyService(build_record_backend(settings, clock).keys, clock)


def build_retrieval_extras(settings: MemorySettings, backend: RecordBackend, links: EntityLinker,
                           clock: Clock) -> RetrievalExtras:
    """Upstream Zengram's optional retrieval stages the settings turn on (docs/retrieval-extras.md)."""
    from zengram.memory.services.graph import GraphPath
    from zengram.memory.services.rerank import RerankStage
    from zengram.memory.services.retrieval import RetrievalExtras

    graph_policy, rerank_policy = settings.graph_policy(), settings.rerank_policy()
    graph = None
    if graph_policy.enabled:
        graph = GraphPath(backend.entities, backend.records, lambda text: links.extract(text, ""), graph_policy)
    rerank = None
    if rerank_policy.enabled and settings.rerank_url is not None:
        from zengram.adapters.http import HttpReranker

        key = settings.rerank_api_key.get_secret_value() if settings.rerank_api_key else None
        reranker = HttpReranker(settings.rerank_url, api=settings.rerank_api, model=settings.rerank_model,
                                api_key=key, timeout=rerank_policy.timeout_seconds, max_batch=rerank_policy.max_batch)
        rerank = RerankStage(reranker, clock, candidates=rerank_policy.candidates, breaker=rerank_policy.breaker())
    return RetrievalExtras(settings.query_extras(), graph=graph, rerank=rerank)


def build_consolidation_service(settings: MemorySettings, backend: RecordBackend, memory: MemoryService,
                                index: SearchIndex, embedder: Embedder, llm: LanguageModel,
                                clock: Clock) -> ConsolidationService:
    """Jobs and the lock live where the records do; async runs go to a thread, or (AWS) another invocation."""
    from zengram.memory.services.consolidation import ConsolidationConfig, ConsolidationService, ConsolidationStores

    config = ConsolidationConfig(
        enabled=settings.consolidation_enabled, interval=settings.consolidation_interval,
        batch_size=settings.consolidation_batch_size, max_batches=settings.consolidation_max_batches,
        similarity=settings.consolidation_similarity,
        event_ttl=timedelta(days=settings.consolidation_event_ttl_days),
        lock_seconds=settings.consolidation_lock_seconds,
    )
    launcher = JOB_LAUNCHERS[settings.consolidation_launcher](settings)
    stores = ConsolidationStores(backend.records, backend.consolidation, backend.jobs)
    return ConsolidationService(stores, memory, index, embedder, llm, clock, launcher, config)


def build_stats_service(settings: MemorySettings, backend: RecordBackend, index: SearchIndex,
                        clock: Clock) -> StatsService:
    from zengram.memory.services.stats import StatsService

    return StatsService(backend.counters, backend.outbox, backend.records, index, settings.decay_factor,
                        settings.search_paths, clock, entities=backend.entities)


def build_research_runner(settings: MemorySettings, steps: ResearchSteps) -> ResearchRunner:
    """The Step Functions state machine when its ARN is configured (AWS host), else the in-process loop."""
    if settings.research_state_machine_arn:
        from zengram.adapters.stepfunctions import StepFunctionsResearchRunner

        return StepFunctionsResearchRunner(settings.research_state_machine_arn, mode=settings.research_execution,
                                           timeout=settings.research_timeout, region=settings.aws_region)
    from zengram.memory.services.research import InProcessResearchRunner

    return InProcessResearchRunner(steps)


def build_research_service(
    settings: MemorySettings, memory: MemoryService, records: RecordStore, llm: LanguageModel
) -> ResearchService:
    from zengram.memory.services.research import ResearchService, ResearchSteps

    steps = ResearchSteps(memory, records, llm, retrieve_limit=settings.research_retrieve_limit,
                          synthesis_memories=settings.research_synthesis_memories)
    return ResearchService(steps, build_research_runner(settings, steps), enabled=settings.research_enabled)
