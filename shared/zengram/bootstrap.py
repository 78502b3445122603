"""The only place that picks adapters: settings in, a wired container out."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from zengram.ports import Clock, Embedder, RecordStore, SearchIndex
from zengram.services.memory import MemoryService
from zengram.settings import Settings


@dataclass
class Container:
    settings: Settings
    store: RecordStore
    index: SearchIndex
    embedder: Embedder
    memory: MemoryService
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
    from zengram.adapters.minilm import MiniLMEmbedder

    return MiniLMEmbedder(model_dir=settings.minilm_model_dir)


def build_container(
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    clock: Clock | None = None,
) -> Container:
    """Wires the embedded host: SQLite records, the embedded search index, the configured embedder."""
    from zengram.adapters.sqlite import EmbeddedSearchIndex, SQLiteRecordStore
    from zengram.adapters.system import SystemClock

    store = SQLiteRecordStore(settings.records_path)
    index = EmbeddedSearchIndex(settings.index_path)
    embedder = embedder or build_embedder(settings)
    executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="zengram-search")
    memory = MemoryService(
        store, index, embedder, clock or SystemClock(), executor,
        scoring=settings.scoring(), max_observers=settings.max_observers,
    )
    container = Container(settings, store, index, embedder, memory,
                          closers=[store.close, index.close, lambda: executor.shutdown(wait=False)])
    try:
        memory.index_sync.ensure_compatible()
        memory.index_sync.repair()
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
