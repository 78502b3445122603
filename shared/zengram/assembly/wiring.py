"""The only place that picks adapters: settings in, a wired container out.

The wiring table (`RECORD_BACKENDS`, `SEARCH_INDEXES`, `EMBEDDERS`, `JOB_LAUNCHERS`) maps each setting's value to
the builder of its adapters. A record backend is built whole by one builder: every store that lives beside the
records shares their file (SQLite) or their table and client (DynamoDB). The two families the product ships:
embedded (`sqlite` records + `embedded` index) and AWS (`dynamodb` records + `opensearch` index); a Lambda function
that never searches may pair DynamoDB with the (unused) embedded index. docs/architecture.md tells how to add one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any

from zengram.kernel.content import Scrubber, derive_digest_key
from zengram.kernel.errors import FeatureUnavailable
from zengram.kernel.lazy import ContainerProvider as ContainerProvider  # its home before it moved
from zengram.kernel.ports import Clock, Embedder, LanguageModel, SearchIndex
from zengram.memory.ports import (
    ApiKeyStore,
    ClientStore,
    CollectionStore,
    ConsolidationWrites,
    EntityStore,
    IndexOutbox,
    JobLauncher,
    JobStore,
    RateLimiter,
    RecordCounters,
    RecordStore,
)
from zengram.memory.services.knowledge import KnowledgeService
from zengram.memory.services.memory import MemoryService
from zengram.settings import Settings

if TYPE_CHECKING:
    from zengram.chat.wiring import ChatLayer
    from zengram.documents.ports import (
        ChunkIndex,
        ChunkStore,
        DocumentSource,
        GraphStore,
        IndexJobLauncher,
        IndexJobStore,
    )
    from zengram.documents.services.indexing import DocumentIndexing
    from zengram.documents.services.query import DocumentQueries
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

    build: Callable[[Settings, Clock], RecordBackend]
    keeps_key_file: bool = False


def build_sqlite_backend(settings: Settings, clock: Clock) -> RecordBackend:
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
                         close=_closing(records.close, clients.close, collections.close, keys.close, jobs.close,
                                        rate_limiter.close, entities.close))


def build_dynamodb_backend(settings: Settings, clock: Clock, *, client: Any | None = None) -> RecordBackend:
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


def _closing(*closers: Callable[[], None]) -> Callable[[], None]:
    def close_all() -> None:
        for close in closers:
            close()

    return close_all


def build_embedded_index(settings: Settings) -> SearchIndex:
    from zengram.adapters.sqlite import EmbeddedSearchIndex

    def threshold(rows: int) -> int | None:
        return rows if rows >= 0 else None

    return EmbeddedSearchIndex(settings.index_path, ann_min_rows=threshold(settings.vector_ann_min_rows),
                               keyword_memory_min_rows=threshold(settings.keyword_memory_min_rows))


def build_opensearch_index(settings: Settings) -> SearchIndex:
    from zengram.adapters.opensearch import OpenSearchIndex

    if not settings.opensearch_url:
        raise ValueError("ZENGRAM_SEARCH_INDEX=opensearch needs ZENGRAM_OPENSEARCH_URL")
    password = settings.opensearch_password.get_secret_value() if settings.opensearch_password else None
    return OpenSearchIndex(
        settings.opensearch_url, alias=settings.opensearch_alias, auth=settings.opensearch_auth,
        username=settings.opensearch_username, password=password, aws_region=settings.aws_region,
        aws_service=settings.opensearch_aws_service, refresh=settings.opensearch_refresh,
        timeout=settings.opensearch_timeout, max_attempts=settings.opensearch_max_attempts,
        retry_delay=settings.opensearch_retry_delay, retry_budget=settings.opensearch_retry_budget,
    )


def build_minilm_embedder(settings: Settings) -> Embedder:
    """all-MiniLM-L6-v2 on the configured runtime, concurrent calls merged into shared forward passes."""
    from zengram.adapters.minilm import build_minilm_embedder as build_runtime
    from zengram.adapters.system.coalescing_embedder import CoalescingEmbedder

    minilm = build_runtime(settings.minilm_runtime, model_dir=settings.minilm_model_dir,
                           cache_dir=settings.minilm_graph_dir, parallel_runs=settings.minilm_parallel_passes,
                           lone_pass_threads=settings.minilm_lone_pass_threads)
    return CoalescingEmbedder(minilm, max_parallel_passes=settings.minilm_parallel_passes)


def build_openai_embedder(settings: Settings) -> Embedder:
    from zengram.adapters.openai import OpenAIEmbedder

    api_key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    if api_key is None and settings.openai_api_key_secret_id:
        from zengram.adapters.aws_parameters import fetch_api_key

        api_key = fetch_api_key(secret_id=settings.openai_api_key_secret_id)
    if api_key is None:
        raise ValueError("ZENGRAM_EMBEDDER=openai needs OPENAI_API_KEY or ZENGRAM_OPENAI_API_KEY_SECRET_ID")
    return OpenAIEmbedder(base_url=settings.openai_base_url, api_key=api_key, model=settings.embedding_model,
                          dimensions=settings.embedding_dimensions)


def build_bedrock_embedder(settings: Settings) -> Embedder:
    from zengram.adapters.bedrock import BedrockEmbedder

    return BedrockEmbedder(model_id=settings.bedrock_model_id, dimensions=settings.embedding_dimensions,
                           region=settings.aws_region)


def build_thread_launcher(settings: Settings) -> JobLauncher:
    from zengram.adapters.system.launcher import ThreadJobLauncher

    return ThreadJobLauncher()


def build_lambda_launcher(settings: Settings) -> JobLauncher:
    from zengram.adapters.aws_lambda import LambdaJobLauncher

    if not settings.consolidation_function:
        raise ValueError("ZENGRAM_CONSOLIDATION_LAUNCHER=lambda needs ZENGRAM_CONSOLIDATION_FUNCTION")
    return LambdaJobLauncher(settings.consolidation_function, region=settings.aws_region)


# -- the wiring table ---------------------------------------------------------------------------------------------

RECORD_BACKENDS: Mapping[str, BackendFamily] = {  # ZENGRAM_RECORD_STORE
    "sqlite": BackendFamily(build_sqlite_backend, keeps_key_file=True),
    "dynamodb": BackendFamily(build_dynamodb_backend),
}
SEARCH_INDEXES: Mapping[str, Callable[[Settings], SearchIndex]] = {  # ZENGRAM_SEARCH_INDEX
    "embedded": build_embedded_index,
    "opensearch": build_opensearch_index,
}
EMBEDDERS: Mapping[str, Callable[[Settings], Embedder]] = {  # ZENGRAM_EMBEDDER
    "minilm": build_minilm_embedder,
    "openai": build_openai_embedder,
    "bedrock": build_bedrock_embedder,
}
JOB_LAUNCHERS: Mapping[str, Callable[[Settings], JobLauncher]] = {  # ZENGRAM_CONSOLIDATION_LAUNCHER
    "thread": build_thread_launcher,
    "lambda": build_lambda_launcher,
}


def build_record_backend(settings: Settings, clock: Clock) -> RecordBackend:
    return RECORD_BACKENDS[settings.record_store].build(settings, clock)


def build_search_index(settings: Settings) -> SearchIndex:
    return SEARCH_INDEXES[settings.search_index](settings)


def build_embedder(settings: Settings) -> Embedder:
    return EMBEDDERS[settings.embedder](settings)


# -- the container ------------------------------------------------------------------------------------------------


@dataclass
class Container:
    settings: Settings
    backend: RecordBackend
    index: SearchIndex
    embedder: Embedder
    memory: MemoryService
    knowledge: KnowledgeService
    closers: list[Callable[[], None]] = field(default_factory=list)
    llm: LanguageModel = field(default_factory=lambda: _no_language_model())
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
    def chat(self) -> ChatLayer:
        """The chat layer (docs/chat.md), built on first use: only hosts that serve /api/v1 pay for it."""
        from zengram.chat.wiring import build_chat_layer

        layer = build_chat_layer(self)
        self.closers.append(layer.close)
        return layer

    @cached_property
    def reflect(self) -> ReflectService:
        from zengram.memory.services.reflect import ReflectService

        return ReflectService(self.memory, self.llm)

    @cached_property
    def research(self) -> ResearchService:
        """Built on first use: only hosts that serve /research (or run its steps) pay for it."""
        return build_research_service(self.settings, self.memory, self.records, self.llm)


def build_container(
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    clock: Clock | None = None,
    check_index: bool = False,
    language_model: LanguageModel | None = None,
) -> Container:
    """Wires the adapters the settings name; `embedder`, `clock` and `language_model` let tests, benchmarks and
    hosts (the Lambda host meters its LLM calls) bring their own.

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

    clock = clock or SystemClock()
    backend = build_record_backend(settings, clock)
    # Only this process serves the embedded index, so only there can its searches wait for writes behind.
    behind = (IndexWriteBehind(settings.index_behind_writes, index_closed=lambda: index.closed_circuit())
              if settings.index_behind_writes and settings.search_index == "embedded" else None)
    index = GuardedIndex(build_search_index(settings), settings.index_circuit(), clock,
                         before_each_call=behind.drain if behind else None)
    embedder = embedder or build_embedder(settings)
    executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="zengram-search")
    # Embeddings started ahead of record writes: an import's, and (`embed_beside_writes`) a new memory's. Its
    # tasks wait on nothing but the embedder.
    embed_executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="zengram-embed")
    scrubber = build_scrubber(settings)
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
    llm = language_model or build_language_model(settings)
    stats = build_stats_service(settings, backend, index, clock)
    container = Container(
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


def build_key_service(settings: Settings) -> KeyService:
    """Just what verifying a scoped key needs, without the rest of the container: the API Gateway authorizer's.
    The record backend is built whole (its constructors touch no network) for its key store."""
    from zengram.adapters.system import SystemClock
    from zengram.memory.services.keys import KeyService

    clock = SystemClock()
    return KeyService(build_record_backend(settings, clock).keys, clock)


def build_retrieval_extras(settings: Settings, backend: RecordBackend, links: EntityLinker,
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


def build_consolidation_service(settings: Settings, backend: RecordBackend, memory: MemoryService,
                                index: SearchIndex, embedder: Embedder, llm: LanguageModel,
                                clock: Clock) -> ConsolidationService:
    """Jobs and the lock live where the records do; async runs go to a thread, or (AWS) another invocation."""
    from zengram.memory.services.consolidation import ConsolidationConfig, ConsolidationService

    config = ConsolidationConfig(
        enabled=settings.consolidation_enabled, interval=settings.consolidation_interval,
        batch_size=settings.consolidation_batch_size, max_batches=settings.consolidation_max_batches,
        similarity=settings.consolidation_similarity,
        event_ttl=timedelta(days=settings.consolidation_event_ttl_days),
        lock_seconds=settings.consolidation_lock_seconds,
    )
    launcher = JOB_LAUNCHERS[settings.consolidation_launcher](settings)
    return ConsolidationService(backend.records, backend.consolidation, backend.jobs, memory, index, embedder, llm,
                                clock, launcher, config)


def build_stats_service(settings: Settings, backend: RecordBackend, index: SearchIndex, clock: Clock) -> StatsService:
    from zengram.memory.services.stats import StatsService

    return StatsService(backend.counters, backend.outbox, backend.records, index, settings, clock,
                        entities=backend.entities)


def _no_language_model() -> LanguageModel:
    from zengram.adapters.system.language_model import NoLanguageModel

    return NoLanguageModel()


def build_language_model(settings: Settings) -> LanguageModel:
    """An OpenAI-compatible chat model when a base URL or a key is configured; else one that answers 503."""
    api_key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    if api_key is None and settings.llm_api_key_secret_id:
        from zengram.adapters.aws_parameters import fetch_api_key

        api_key = fetch_api_key(secret_id=settings.llm_api_key_secret_id)
    if api_key is None and settings.llm_base_url is None:
        return _no_language_model()
    from zengram.adapters.openai.chat import OpenAIChatModel

    return OpenAIChatModel(base_url=settings.llm_base_url, api_key=api_key, model=settings.llm_model,
                           timeout=settings.llm_timeout, max_retries=settings.llm_max_retries)


def build_research_runner(settings: Settings, steps: ResearchSteps) -> ResearchRunner:
    """The Step Functions state machine when its ARN is configured (AWS host), else the in-process loop."""
    if settings.research_state_machine_arn:
        from zengram.adapters.stepfunctions import StepFunctionsResearchRunner

        return StepFunctionsResearchRunner(settings.research_state_machine_arn, mode=settings.research_execution,
                                           timeout=settings.research_timeout, region=settings.aws_region)
    from zengram.memory.services.research import InProcessResearchRunner

    return InProcessResearchRunner(steps)


def build_research_service(
    settings: Settings, memory: MemoryService, records: RecordStore, llm: LanguageModel
) -> ResearchService:
    from zengram.memory.services.research import ResearchService, ResearchSteps

    steps = ResearchSteps(memory, records, llm, retrieve_limit=settings.research_retrieve_limit,
                          synthesis_memories=settings.research_synthesis_memories)
    return ResearchService(steps, build_research_runner(settings, steps), enabled=settings.research_enabled)


def build_scrubber(settings: Settings) -> Scrubber:
    """The credential scrubber, keyed by ZENGRAM_SCRUB_KEY or else by the admin API key (from the environment,
    Secrets Manager / SSM on AWS, or the embedded host's key file). The key is read on the first scrub, so
    functions that never write never fetch it."""
    return Scrubber(lambda: derive_digest_key(_scrub_secret(settings)))


def _scrub_secret(settings: Settings) -> str:
    if settings.scrub_key is not None:
        return settings.scrub_key.get_secret_value()
    if settings.api_key is not None:
        return settings.api_key.get_secret_value()
    if settings.api_key_secret_id or settings.api_key_parameter:
        from zengram.adapters.aws_parameters import fetch_api_key

        return fetch_api_key(secret_id=settings.api_key_secret_id, parameter_name=settings.api_key_parameter)
    if RECORD_BACKENDS[settings.record_store].keeps_key_file:
        from zengram.embedded.keys import resolve_api_key

        return resolve_api_key(settings)[0]
    raise FeatureUnavailable("writes need a key for credential placeholders: set ZENGRAM_SCRUB_KEY or the API key")


# -- the document knowledge base (/kb) -----------------------------------------------------------------------

@dataclass
class DocumentsContainer:
    """The document knowledge base's services, wired for one host."""

    settings: Settings
    indexing: DocumentIndexing
    queries: DocumentQueries
    embedder: Embedder
    launcher: IndexJobLauncher
    closers: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        self.launcher.close()
        for close in reversed(self.closers):
            close()


def build_documents_container(settings: Settings, *, embedder: Embedder | None = None, clock: Clock | None = None,
                              recover: bool = False) -> DocumentsContainer:
    """Records where the memories' records live (SQLite file / DynamoDB table of its own), chunk vectors and
    keywords where the memories' index lives (embedded file / OpenSearch alias of its own), folders from the local
    disk or S3, jobs on a worker thread or a Step Functions state machine. `embedder` is the memories' when the
    host has built it (the same model either way: `build_embedder`); file text is scrubbed of credentials with the
    memories' scrubber key before it is chunked. `recover` (single-process hosts) fails jobs a previous process
    left running and restarts queued ones."""
    from zengram.adapters.pdf import PypdfTextExtractor
    from zengram.adapters.system import SystemClock
    from zengram.adapters.treesitter import TreeSitterCodeParser
    from zengram.documents.services.indexing import DocumentIndexing, IndexingConfig
    from zengram.documents.services.parsing import FileParser
    from zengram.documents.services.query import DocumentQueries

    clock = clock or SystemClock()
    embedder = embedder or build_embedder(settings)
    stores = DOCUMENT_STORES[settings.record_store](settings)
    index = CHUNK_INDEXES[settings.search_index](settings)
    closers: list[Callable[[], None]] = [stores.close, index.close]
    chunks, graph, jobs = stores.chunks, stores.graph, stores.jobs
    launcher = _index_job_launcher(settings)
    config = IndexingConfig(batch_files=settings.documents_batch_files,
                            max_file_bytes=int(settings.documents_max_file_mb * 1024 * 1024),
                            graph_enabled=settings.documents_graph_enabled)
    parser = FileParser(TreeSitterCodeParser(), PypdfTextExtractor(), scrub=build_scrubber(settings).scrub)
    indexing = DocumentIndexing(chunks, graph, jobs, index, embedder, _document_sources(settings), parser, clock,
                                launcher, config)
    queries = DocumentQueries(chunks, graph, jobs, index, embedder, graph_enabled=settings.documents_graph_enabled,
                              graph_store_type=stores.graph_store_type)
    container = DocumentsContainer(settings, indexing, queries, embedder, launcher, closers)
    if recover:
        indexing.recover()
    return container


@dataclass(frozen=True)
class DocumentStores:
    """The document knowledge base's records, kept where the memories' are (a file or a table of their own).
    `graph_store_type` is what /kb/health/status reports."""

    chunks: ChunkStore
    graph: GraphStore
    jobs: IndexJobStore
    graph_store_type: str
    close: Callable[[], None]


def build_sqlite_documents(settings: Settings) -> DocumentStores:
    from zengram.adapters.sqlite.documents import (
        SQLiteChunkStore,
        SQLiteGraphStore,
        SQLiteIndexJobStore,
        open_document_database,
    )

    database = open_document_database(settings.documents_path)
    return DocumentStores(SQLiteChunkStore(database), SQLiteGraphStore(database), SQLiteIndexJobStore(database),
                          "sqlite", database.close)


def build_dynamodb_documents(settings: Settings) -> DocumentStores:
    from zengram.adapters.dynamodb.documents import DynamoDBDocumentTables

    tables = DynamoDBDocumentTables(settings.documents_dynamodb_table, region=settings.aws_region,
                                    create=settings.dynamodb_create_table)
    return DocumentStores(tables.chunks, tables.graph, tables.jobs, "dynamodb", lambda: None)


def build_embedded_chunk_index(settings: Settings) -> ChunkIndex:
    from zengram.adapters.sqlite.chunk_index import EmbeddedChunkIndex

    return EmbeddedChunkIndex(settings.documents_index_path)


def build_opensearch_chunk_index(settings: Settings) -> ChunkIndex:
    from zengram.adapters.opensearch.documents import OpenSearchChunkIndex

    if not settings.opensearch_url:
        raise ValueError("ZENGRAM_SEARCH_INDEX=opensearch needs ZENGRAM_OPENSEARCH_URL")
    password = settings.opensearch_password.get_secret_value() if settings.opensearch_password else None
    return OpenSearchChunkIndex(
        settings.opensearch_url, alias=settings.documents_opensearch_alias, auth=settings.opensearch_auth,
        username=settings.opensearch_username, password=password, aws_region=settings.aws_region,
        aws_service=settings.opensearch_aws_service, refresh=settings.opensearch_refresh,
        timeout=settings.opensearch_timeout, max_attempts=settings.opensearch_max_attempts,
        retry_delay=settings.opensearch_retry_delay, retry_budget=settings.opensearch_retry_budget)


# The documents' side of the wiring table: the same settings pick them, each family beside the memories' own.
DOCUMENT_STORES: Mapping[str, Callable[[Settings], DocumentStores]] = {  # ZENGRAM_RECORD_STORE
    "sqlite": build_sqlite_documents,
    "dynamodb": build_dynamodb_documents,
}
CHUNK_INDEXES: Mapping[str, Callable[[Settings], ChunkIndex]] = {  # ZENGRAM_SEARCH_INDEX
    "embedded": build_embedded_chunk_index,
    "opensearch": build_opensearch_chunk_index,
}


def _document_sources(settings: Settings) -> list[DocumentSource]:
    """S3 folders under the s3:// roots; local folders under the other roots. Without any root, the embedded host
    (SQLite records) allows the folder it starts in, and the AWS host nothing."""
    from pathlib import Path

    roots = settings.documents_allowed_roots
    s3_roots = tuple(root for root in roots if root.startswith("s3://"))
    local_roots = [root for root in roots if not root.startswith("s3://")]
    sources: list[DocumentSource] = []
    if s3_roots:
        from zengram.adapters.s3 import S3DocumentSource

        sources.append(S3DocumentSource(s3_roots, region=settings.aws_region))
    from zengram.adapters.system.files import LocalDocumentSource

    if not roots and settings.record_store == "sqlite":
        local_roots = [str(Path.cwd())]
    sources.append(LocalDocumentSource(local_roots))
    return sources


def _index_job_launcher(settings: Settings) -> IndexJobLauncher:
    if settings.documents_state_machine_arn:
        from zengram.adapters.stepfunctions.documents import StepFunctionsIndexLauncher

        return StepFunctionsIndexLauncher(settings.documents_state_machine_arn, region=settings.aws_region)
    from zengram.adapters.system.index_worker import ThreadIndexWorker

    return ThreadIndexWorker()
