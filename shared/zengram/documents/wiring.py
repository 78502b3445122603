"""The document knowledge base's wiring (/kb): its records where the memories' records live (SQLite file / DynamoDB
table of its own), chunk vectors and keywords where the memories' index lives (embedded file / OpenSearch alias of its
own), folders from the local disk or S3, jobs on a worker thread or a Step Functions state machine."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from zengram.documents.settings import DocumentsSettings
from zengram.kernel.content import Scrubber
from zengram.kernel.ports import Clock, Embedder

if TYPE_CHECKING:
    from zengram.documents.ports import (
        ChunkIndex,
        ChunkStore,
        DocumentSource,
        EmbeddingCacheStore,
        GraphStore,
        IndexJobLauncher,
        IndexJobStore,
    )
    from zengram.documents.services.embedding_cache import CachingEmbedder
    from zengram.documents.services.indexing import DocumentIndexing
    from zengram.documents.services.query import DocumentQueries
    from zengram.documents.services.watching import FolderWatching


@dataclass
class DocumentsContainer:
    """The document knowledge base's services, wired for one host."""

    settings: DocumentsSettings
    indexing: DocumentIndexing
    queries: DocumentQueries
    embedder: Embedder
    launcher: IndexJobLauncher
    closers: list[Callable[[], None]] = field(default_factory=list)
    cache: CachingEmbedder | None = None  # the embedding cache, where the record store keeps one
    watching: FolderWatching | None = None  # watched folders (`watch_mode: auto`)

    def close(self) -> None:
        if self.watching is not None:
            self.watching.close()
        self.launcher.close()
        for close in reversed(self.closers):
            close()


def build_documents(settings: DocumentsSettings, embedder: Embedder, scrubber: Scrubber, *, clock: Clock | None = None,
                    recover: bool = False) -> DocumentsContainer:
    """Records where the memories' records live (SQLite file / DynamoDB table of its own), chunk vectors and
    keywords where the memories' index lives (embedded file / OpenSearch alias of its own), folders from the local
    disk or S3, jobs on a worker thread or a Step Functions state machine. `embedder` is the memories' (the same model
    either way: `zengram.adapters.factories.build_embedder`); file text is scrubbed of credentials with the memories'
    scrubber before it is chunked. `recover` (single-process hosts) fails jobs a previous process
    left running and restarts queued ones, and starts the file watcher of watched folders."""
    from zengram.adapters.pdf import PypdfTextExtractor
    from zengram.adapters.system import SystemClock
    from zengram.adapters.treesitter import TreeSitterCodeParser
    from zengram.documents.services.embedding_cache import CachingEmbedder
    from zengram.documents.services.indexing import DocumentIndexing, DocumentRecords, IndexingConfig
    from zengram.documents.services.parsing import FileParser
    from zengram.documents.services.query import DocumentQueries
    from zengram.documents.services.watching import FolderWatching

    clock = clock or SystemClock()
    stores = DOCUMENT_STORES[settings.record_store](settings)
    index = CHUNK_INDEXES[settings.search_index](settings)
    closers: list[Callable[[], None]] = [stores.close, index.close]
    chunks, graph, jobs = stores.chunks, stores.graph, stores.jobs
    launcher = _index_job_launcher(settings)
    config = IndexingConfig(batch_files=settings.documents_batch_files,
                            max_file_bytes=int(settings.documents_max_file_mb * 1024 * 1024),
                            graph_enabled=settings.documents_graph_enabled)
    cache = CachingEmbedder(embedder, stores.embedding_cache) if stores.embedding_cache else None
    model = cache or embedder  # the memories' embedder itself stays the container's (one model per process)
    parser = FileParser(TreeSitterCodeParser(), PypdfTextExtractor(), scrub=scrubber.scrub)
    indexing = DocumentIndexing(DocumentRecords(chunks, graph, jobs), index, model, _document_sources(settings),
                                parser, clock, launcher, config)
    queries = DocumentQueries(chunks, graph, jobs, index, model, graph_enabled=settings.documents_graph_enabled,
                              graph_store_type=stores.graph_store_type)
    watching = FolderWatching(indexing, default_debounce=settings.documents_watch_debounce_seconds)
    container = DocumentsContainer(settings, indexing, queries, embedder, launcher, closers, cache, watching)
    if recover:
        indexing.recover()
        if settings.documents_watch_enabled:
            closers.append(_start_folder_watcher(watching))
    return container


def _start_folder_watcher(watching: FolderWatching) -> Callable[[], None]:
    from zengram.adapters.system.folder_watcher import WatchfilesFolderWatcher

    return WatchfilesFolderWatcher(watching).start().close


@dataclass(frozen=True)
class DocumentStores:
    """The document knowledge base's records, kept where the memories' are (a file or a table of their own).
    `graph_store_type` is what /kb/health/status reports."""

    chunks: ChunkStore
    graph: GraphStore
    jobs: IndexJobStore
    graph_store_type: str
    close: Callable[[], None]
    embedding_cache: EmbeddingCacheStore | None = None


def build_sqlite_documents(settings: DocumentsSettings) -> DocumentStores:
    from zengram.adapters.sqlite.documents import (
        SQLiteChunkStore,
        SQLiteGraphStore,
        SQLiteIndexJobStore,
        open_document_database,
    )
    from zengram.adapters.sqlite.embedding_cache import SQLiteEmbeddingCache

    database = open_document_database(settings.documents_path)
    return DocumentStores(SQLiteChunkStore(database), SQLiteGraphStore(database), SQLiteIndexJobStore(database),
                          "sqlite", database.close, SQLiteEmbeddingCache(database))


def build_dynamodb_documents(settings: DocumentsSettings) -> DocumentStores:
    from zengram.adapters.dynamodb.documents import DynamoDBDocumentTables
    from zengram.adapters.dynamodb.embedding_cache import DynamoDBEmbeddingCache

    tables = DynamoDBDocumentTables(settings.documents_dynamodb_table, region=settings.aws_region,
                                    create=settings.dynamodb_create_table)
    return DocumentStores(tables.chunks, tables.graph, tables.jobs, "dynamodb", lambda: None,
                          DynamoDBEmbeddingCache(tables.table))


def build_embedded_chunk_index(settings: DocumentsSettings) -> ChunkIndex:
    from zengram.adapters.sqlite.chunk_index import EmbeddedChunkIndex

    return EmbeddedChunkIndex(settings.documents_index_path)


def build_opensearch_chunk_index(settings: DocumentsSettings) -> ChunkIndex:
    from zengram.adapters.factories import opensearch_options
    from zengram.adapters.opensearch.documents import OpenSearchChunkIndex

    options = opensearch_options(settings)
    return OpenSearchChunkIndex(options.client, alias=settings.documents_opensearch_alias, refresh=options.refresh,
                                retry=options.retry)


# The documents' side of the wiring table: the same settings pick them, each family beside the memories' own.
DOCUMENT_STORES: Mapping[str, Callable[[DocumentsSettings], DocumentStores]] = {  # ZENGRAM_RECORD_STORE
    "sqlite": build_sqlite_documents,
    "dynamodb": build_dynamodb_documents,
}
CHUNK_INDEXES: Mapping[str, Callable[[DocumentsSettings], ChunkIndex]] = {  # ZENGRAM_SEARCH_INDEX
    "embedded": build_embedded_chunk_index,
    "opensearch": build_opensearch_chunk_index,
}


def _document_sources(settings: DocumentsSettings) -> list[DocumentSource]:
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


def _index_job_launcher(settings: DocumentsSettings) -> IndexJobLauncher:
    if settings.documents_state_machine_arn:
        from zengram.adapters.stepfunctions.documents import StepFunctionsIndexLauncher

        return StepFunctionsIndexLauncher(settings.documents_state_machine_arn, region=settings.aws_region)
    from zengram.adapters.system.index_worker import ThreadIndexWorker

    return ThreadIndexWorker()
