"""The only place that picks adapters: settings in, a wired container out."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING

from zengram.domain.content import Scrubber, derive_digest_key
from zengram.domain.errors import FeatureUnavailable
from zengram.ports import Clock, Embedder, LanguageModel, RecordStore, SearchIndex
from zengram.services.knowledge import KnowledgeService
from zengram.services.memory import MemoryService
from zengram.settings import Settings

if TYPE_CHECKING:
    from zengram.bootstrap_chat import ChatLayer
    from zengram.ports import ApiKeyStore, ClientStore, EntityStore, RateLimiter, ResearchRunner
    from zengram.services.clients import ClientService
    from zengram.services.consolidation import ConsolidationService
    from zengram.services.entities import EntityService
    from zengram.services.keys import KeyService
    from zengram.services.reflect import ReflectService
    from zengram.services.research import ResearchService, ResearchSteps
    from zengram.services.stats import StatsService


@dataclass
class Container:
    settings: Settings
    store: RecordStore
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
    clock: Clock = field(kw_only=True)

    def close(self) -> None:
        for close in reversed(self.closers):
            close()

    @cached_property
    def chat(self) -> ChatLayer:
        """The chat layer (docs/chat.md), built on first use: only hosts that serve /api/v1 pay for it."""
        from zengram.bootstrap_chat import build_chat_layer

        layer = build_chat_layer(self)
        self.closers.append(layer.close)
        return layer

    @cached_property
    def reflect(self) -> ReflectService:
        from zengram.services.reflect import ReflectService

        return ReflectService(self.memory, self.llm)

    @cached_property
    def research(self) -> ResearchService:
        """Built on first use: only hosts that serve /research (or run its steps) pay for it."""
        return build_research_service(self.settings, self.memory, self.store, self.llm)


def build_embedder(settings: Settings) -> Embedder:
    if settings.embedder == "openai":
        from zengram.adapters.openai import OpenAIEmbedder

        if settings.openai_api_key is None:
            raise ValueError("ZENGRAM_EMBEDDER=openai needs OPENAI_API_KEY")
        return OpenAIEmbedder(
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key.get_secret_value(),
            model=settings.embedding_model,
            dimensions=settings.embedding_dimensions,
        )
    if settings.embedder == "bedrock":
        from zengram.adapters.bedrock import BedrockEmbedder

        return BedrockEmbedder(model_id=settings.bedrock_model_id, dimensions=settings.embedding_dimensions,
                               region=settings.aws_region)
    from zengram.adapters.minilm import build_minilm_embedder
    from zengram.adapters.system.coalescing_embedder import CoalescingEmbedder

    minilm = build_minilm_embedder(settings.minilm_runtime, model_dir=settings.minilm_model_dir,
                                   cache_dir=settings.minilm_graph_dir)
    return CoalescingEmbedder(minilm, max_parallel_passes=settings.minilm_parallel_passes)


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
    from zengram.services.research import InProcessResearchRunner

    return InProcessResearchRunner(steps)


def build_research_service(
    settings: Settings, memory: MemoryService, store: RecordStore, llm: LanguageModel
) -> ResearchService:
    from zengram.services.research import ResearchService, ResearchSteps

    steps = ResearchSteps(memory, store, llm, retrieve_limit=settings.research_retrieve_limit,
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
    if settings.record_store == "sqlite":
        from zengram.embedded.keys import resolve_api_key

        return resolve_api_key(settings)[0]
    raise FeatureUnavailable("writes need a key for credential placeholders: set ZENGRAM_SCRUB_KEY or the API key")


def build_record_store(settings: Settings) -> RecordStore:
    if settings.record_store == "dynamodb":
        from zengram.adapters.dynamodb import DynamoDBRecordStore

        store = DynamoDBRecordStore(settings.dynamodb_table, region=settings.aws_region)
        if settings.dynamodb_create_table:
            store.ensure_table()
        return store
    from zengram.adapters.sqlite import SQLiteRecordStore

    return SQLiteRecordStore(settings.records_path)


def build_client_store(settings: Settings, store: RecordStore) -> ClientStore:
    """Fingerprints live where the records do: the same DynamoDB table (and client), or the same SQLite file."""
    if settings.record_store == "dynamodb":
        from zengram.adapters.dynamodb.clients import DynamoDBClientStore

        return DynamoDBClientStore(settings.dynamodb_table, client=getattr(store, "client", None),
                                   region=settings.aws_region)
    from zengram.adapters.sqlite.clients import SQLiteClientStore

    return SQLiteClientStore(settings.records_path)


def build_key_store(settings: Settings, store: RecordStore) -> ApiKeyStore:
    """Scoped API keys (their hashes) live where the records do: the same DynamoDB table, or the same SQLite file."""
    if settings.record_store == "dynamodb":
        from zengram.adapters.dynamodb.keys import DynamoDBApiKeyStore

        return DynamoDBApiKeyStore(settings.dynamodb_table, client=getattr(store, "client", None),
                                   region=settings.aws_region)
    from zengram.adapters.sqlite.keys import SQLiteApiKeyStore

    return SQLiteApiKeyStore(settings.records_path)


def build_rate_limiter(settings: Settings, store: RecordStore, clock: Clock) -> RateLimiter:
    """Counters in the record store's backend, so every process (every Lambda instance) shares them."""
    if settings.record_store == "dynamodb":
        from zengram.adapters.dynamodb.rate_limits import DynamoDBRateLimiter

        return DynamoDBRateLimiter(settings.dynamodb_table, clock, client=getattr(store, "client", None),
                                   region=settings.aws_region)
    from zengram.adapters.sqlite.rate_limits import SQLiteRateLimiter

    return SQLiteRateLimiter(settings.records_path, clock)


def build_consolidation_service(settings: Settings, store: RecordStore, memory: MemoryService, index: SearchIndex,
                                embedder: Embedder, llm: LanguageModel, clock: Clock) -> ConsolidationService:
    """Jobs and the lock live where the records do; async runs go to a thread, or (AWS) another invocation."""
    from zengram.ports import JobLauncher, JobStore
    from zengram.services.consolidation import ConsolidationConfig, ConsolidationService

    jobs: JobStore
    if settings.record_store == "dynamodb":
        from zengram.adapters.dynamodb.jobs import DynamoDBJobStore

        jobs = DynamoDBJobStore(settings.dynamodb_table, client=getattr(store, "client", None),
                                region=settings.aws_region)
    else:
        from zengram.adapters.sqlite.jobs import SQLiteJobStore

        jobs = SQLiteJobStore(settings.records_path)
    launcher: JobLauncher
    if settings.consolidation_launcher == "lambda":
        from zengram.adapters.aws_lambda import LambdaJobLauncher

        if not settings.consolidation_function:
            raise ValueError("ZENGRAM_CONSOLIDATION_LAUNCHER=lambda needs ZENGRAM_CONSOLIDATION_FUNCTION")
        launcher = LambdaJobLauncher(settings.consolidation_function, region=settings.aws_region)
    else:
        from zengram.adapters.system.launcher import ThreadJobLauncher

        launcher = ThreadJobLauncher()
    config = ConsolidationConfig(
        enabled=settings.consolidation_enabled, interval=settings.consolidation_interval,
        batch_size=settings.consolidation_batch_size, max_batches=settings.consolidation_max_batches,
        similarity=settings.consolidation_similarity,
        event_ttl=timedelta(days=settings.consolidation_event_ttl_days),
        lock_seconds=settings.consolidation_lock_seconds,
    )
    return ConsolidationService(store, jobs, memory, index, embedder, llm, clock, launcher, config)


def build_search_index(settings: Settings) -> SearchIndex:
    if settings.search_index == "opensearch":
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
    from zengram.adapters.sqlite import EmbeddedSearchIndex

    return EmbeddedSearchIndex(settings.index_path)


def build_entity_store(settings: Settings, store: RecordStore) -> EntityStore:
    """The entity registry lives beside the records: the same DynamoDB table (and client), or its own SQLite file
    in the data folder (so its writes never queue behind record writes)."""
    if settings.record_store == "dynamodb":
        from zengram.adapters.dynamodb.entities import DynamoDBEntityStore

        return DynamoDBEntityStore(settings.dynamodb_table, client=getattr(store, "client", None),
                                   region=settings.aws_region)
    from zengram.adapters.sqlite.entities import SQLiteEntityStore

    return SQLiteEntityStore(settings.data_dir / "entities.sqlite3")


def build_container(
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    clock: Clock | None = None,
    check_index: bool = False,
) -> Container:
    """Wires the adapters the settings name; `embedder` and `clock` let tests and benchmarks bring their own.

    Nothing here touches the search index: it is checked (and bound to the embedder) on first use, so a host
    whose index is down still stores and reads records. `check_index=True` checks it now and raises
    EmbeddingMismatch for an index built with another model (the embedded server's start-up, which should
    refuse a wrong configuration at once).
    """
    from zengram.adapters.system import SystemClock
    from zengram.services.index_guard import GuardedIndex

    clock = clock or SystemClock()
    store = build_record_store(settings)
    index = GuardedIndex(build_search_index(settings), settings.index_circuit(), clock)
    embedder = embedder or build_embedder(settings)
    executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="zengram-search")
    from zengram.services.clients import ClientService

    client_store, rate_limiter = build_client_store(settings, store), build_rate_limiter(settings, store, clock)
    scrubber = build_scrubber(settings)
    clients = ClientService(client_store, clock, scrubber=scrubber, cache_seconds=settings.client_cache_seconds)
    from zengram.services.keys import KeyService

    key_store = build_key_store(settings, store)
    from zengram.services.entities import EntityService

    entity_store = build_entity_store(settings, store)
    # The reclassify event and index refresh go through `memory`, which is built next (late-bound lambdas).
    entities = EntityService(entity_store, store, clock, known_clients=clients.known_clients,
                             refresh_index=lambda changed: memory.index_sync.refresh_attributes(changed),
                             log_event=lambda draft: memory.store(draft), cache_seconds=settings.client_cache_seconds)
    memory = MemoryService(
        store, index, embedder, clock or SystemClock(), executor,
        scrubber=scrubber, scoring=settings.scoring(), max_observers=settings.max_observers,
        search_paths=settings.search_paths, reinforce_on_search=settings.reinforce_on_search,
        context=settings.context_policy(), path_fetch=settings.search_path_fetch,
        resolve_client=clients.resolve,
        entities=entities,
        index_park_after=settings.index_repair_attempts,
    )
    knowledge = KnowledgeService(store, clock, memory.index_sync, entities, scrubber=scrubber)
    llm = build_language_model(settings)
    consolidation = build_consolidation_service(settings, store, memory, index, embedder, llm, clock)
    closers = [getattr(port, "close", None)
               for port in (store, index, client_store, rate_limiter, consolidation, entity_store, key_store)]
    container = Container(settings, store, index, embedder, memory, knowledge,
                          closers=[*(c for c in closers if c), lambda: executor.shutdown(wait=False)],
                          llm=llm, clients=clients, rate_limiter=rate_limiter, consolidation=consolidation,
                          stats=build_stats_service(settings, store, index, clock, entity_store), entities=entities,
                          keys=KeyService(key_store, clock), clock=clock)
    try:
        if check_index:
            memory.index_sync.ensure_compatible()
    except BaseException:
        container.close()
        raise
    return container


def build_stats_service(settings: Settings, store: RecordStore, index: SearchIndex, clock: Clock,
                        entities: EntityStore | None = None) -> StatsService:
    from zengram.services.stats import StatsService

    return StatsService(store, index, settings, clock, entities=entities)


class ContainerProvider:
    """Builds the container on first use (never at import time) and hands the same one to everyone."""

    def __init__(self, factory: Callable[[], Container]) -> None:
        self._factory = factory
        self._container: Container | None = None
        self._lock = threading.Lock()

    def get(self) -> Container:
        if self._container is None:
            with self._lock:
                if self._container is None:
                    self._container = self._factory()
        return self._container

    def close(self) -> None:
        with self._lock:
            if self._container is not None:
                self._container.close()
                self._container = None
