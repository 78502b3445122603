"""The only place that picks adapters: settings in, a wired container out."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from zengram.ports import Clock, Embedder, RecordStore, SearchIndex
from zengram.services.knowledge import KnowledgeService
from zengram.services.memory import MemoryService
from zengram.settings import Settings


@dataclass
class Container:
    settings: Settings
    store: RecordStore
    index: SearchIndex
    embedder: Embedder
    memory: MemoryService
    knowledge: KnowledgeService
    closers: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        for close in reversed(self.closers):
            close()


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
    from zengram.adapters.minilm import MiniLMEmbedder

    return MiniLMEmbedder(model_dir=settings.minilm_model_dir)


def build_record_store(settings: Settings) -> RecordStore:
    if settings.record_store == "dynamodb":
        from zengram.adapters.dynamodb import DynamoDBRecordStore

        store = DynamoDBRecordStore(settings.dynamodb_table, region=settings.aws_region)
        if settings.dynamodb_create_table:
            store.ensure_table()
        return store
    from zengram.adapters.sqlite import SQLiteRecordStore

    return SQLiteRecordStore(settings.records_path)


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
            timeout=settings.opensearch_timeout,
        )
    from zengram.adapters.sqlite import EmbeddedSearchIndex

    return EmbeddedSearchIndex(settings.index_path)


def build_container(
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    clock: Clock | None = None,
    check_index: bool = True,
) -> Container:
    """Wires the adapters the settings name; `embedder` and `clock` let tests and benchmarks bring their own.

    `check_index=False` is for `reindex`, which rebuilds an index built with another model.
    """
    from zengram.adapters.system import SystemClock

    clock = clock or SystemClock()
    store = build_record_store(settings)
    index = build_search_index(settings)
    embedder = embedder or build_embedder(settings)
    executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="zengram-search")
    memory = MemoryService(
        store, index, embedder, clock or SystemClock(), executor,
        scoring=settings.scoring(), max_observers=settings.max_observers,
        search_paths=settings.search_paths, reinforce_on_search=settings.reinforce_on_search,
        context=settings.context_policy(), path_fetch=settings.search_path_fetch,
    )
    knowledge = KnowledgeService(store, clock, memory.index_sync)
    closers = [getattr(port, "close", None) for port in (store, index)]
    container = Container(settings, store, index, embedder, memory, knowledge,
                          closers=[*(c for c in closers if c), lambda: executor.shutdown(wait=False)])
    try:
        if check_index:
            memory.index_sync.ensure_compatible()
    except BaseException:
        container.close()
        raise
    return container


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
