"""The document knowledge base's routes, served under `/kb` (BASE_PATH: each host mounts this app there, so
`POST /kb/query` is `@router.post("/query")` below). Each answers with and without a trailing slash (the Agent
Brain CLI calls `/health/`, `/query/`, `/index/`…; curl users type `/health`), without redirects."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, status
from fastapi.responses import JSONResponse

from zengram import __version__
from zengram.documents.api.schemas import (
    CancelResponse,
    CountResponse,
    FolderDeleteRequest,
    FolderDeleteResponse,
    FolderInfo,
    FolderListResponse,
    GraphIndexStatus,
    GraphProjectRequest,
    HealthResponse,
    IndexingStatusResponse,
    IndexRequest,
    IndexResponse,
    JobDetail,
    JobListResponse,
    JobSummary,
    timestamp,
)
from zengram.documents.domain.models import IndexJobStatus, IndexOperation
from zengram.documents.domain.query import DocumentQuery, QueryResponse
from zengram.kernel.errors import FeatureUnavailable
from zengram.kernel.timestamps import format_timestamp

if TYPE_CHECKING:  # the services are imported with the documents' container, on first use
    from zengram.documents.services.embedding_cache import CachingEmbedder
    from zengram.documents.services.indexing import DocumentIndexing
    from zengram.documents.services.query import DocumentQueries
    from zengram.documents.services.watching import FolderWatching
    from zengram.documents.wiring import DocumentsContainer

BASE_PATH = "/kb"
"""Where the hosts mount the knowledge base (`create_kb_app`): every path below is served under it."""


def _container(request: Request) -> DocumentsContainer:
    container: DocumentsContainer = request.app.state.documents.get()
    return container


def _indexing(request: Request) -> DocumentIndexing:
    return _container(request).indexing


def _queries(request: Request) -> DocumentQueries:
    return _container(request).queries


def _watching(request: Request) -> FolderWatching | None:
    return _container(request).watching


if TYPE_CHECKING:
    IndexingDep = Annotated[DocumentIndexing, Depends(_indexing)]
    QueriesDep = Annotated[DocumentQueries, Depends(_queries)]
    WatchingDep = Annotated[FolderWatching | None, Depends(_watching)]
else:  # the types stay names for mypy only (zengram.memory.api.deps says why)
    IndexingDep = Annotated[object, Depends(_indexing)]
    QueriesDep = Annotated[object, Depends(_queries)]
    WatchingDep = Annotated[object, Depends(_watching)]


def _watcher_state(watching: FolderWatching | None) -> dict[str, bool | int]:
    if watching is None:
        return {"running": False, "watched_folders": 0}
    return {"running": watching.watcher_running, "watched_folders": len(watching.watched)}


class SlashTwinRouter(APIRouter):
    """An `APIRouter` whose every route also answers at `path/`: the twin is registered right after the route,
    hidden from the OpenAPI document, so the decorators below write each path once."""

    def add_api_route(self, path: str, endpoint: Callable[..., Any], **options: Any) -> None:
        super().add_api_route(path, endpoint, **options)
        super().add_api_route(f"{path}/", endpoint, **{**options, "include_in_schema": False})


router = SlashTwinRouter()


@router.get("/health", tags=["Health"], response_model=HealthResponse, summary="Server health (no key needed)")
def get_health(queries: QueriesDep) -> HealthResponse:
    now = format_timestamp(datetime.now(UTC))
    try:
        state = queries.status()
        ready = queries.is_ready()
    except Exception as error:  # a store or index that cannot be reached: say so rather than fail
        return HealthResponse(status="unhealthy", message=f"Storage unavailable: {type(error).__name__}",
                              version=__version__, timestamp=now)
    if not queries.search_index_reachable():
        return HealthResponse(status="degraded", message="The search index is unavailable; queries will fail",
                              version=__version__, timestamp=now)
    if state.indexing_in_progress:
        return HealthResponse(status="indexing", message=f"Indexing in progress ({state.progress_percent:.1f}%)",
                              version=__version__, timestamp=now)
    message = ("Server is running and ready for queries" if ready
               else "Server is running; no index yet (POST /index to build one)")
    return HealthResponse(status="healthy", message=message, version=__version__, timestamp=now)


@router.get("/health/status", tags=["Health"], response_model=IndexingStatusResponse, summary="Indexing status")
def get_status(queries: QueriesDep, watching: WatchingDep) -> IndexingStatusResponse:
    state = queries.status()
    return IndexingStatusResponse(
        total_documents=state.counts.documents, total_chunks=state.counts.chunks,
        indexing_in_progress=state.indexing_in_progress, current_job_id=state.current_job_id,
        progress_percent=state.progress_percent, last_indexed_at=timestamp(state.last_indexed_at),
        indexed_folders=[folder.folder_path for folder in state.indexed_folders],
        graph_index=GraphIndexStatus(enabled=state.graph_enabled, entity_count=state.counts.entities,
                                     relationship_count=state.counts.relationships,
                                     store_type=state.graph_store_type),
        file_watcher=_watcher_state(watching),
    )


@router.get("/health/config", tags=["Health"], summary="What this server is configured with (not its state)")
def get_config(queries: QueriesDep, watching: WatchingDep) -> dict[str, Any]:
    """Agent Brain's ConfigStatus (its MCP `corpus://config` resource). `storage_backend` names this host's record
    store (sqlite or dynamodb), where Agent Brain's says chroma or postgres."""
    configured = queries.configuration()
    return {"storage_backend": configured.record_store,
            "stores": {"vector": True, "bm25": True, "graph": configured.graph_enabled},
            "reranker_enabled": False, "embedding_model": configured.embedding_model, "rerank_model": None,
            "graph_extractor": "tree-sitter" if configured.graph_enabled else None,
            "watcher_running": bool(watching and watching.watcher_running)}


@router.get("/health/providers", tags=["Health"], summary="The embedding provider and whether it answers")
def get_providers(queries: QueriesDep) -> dict[str, Any]:
    """Agent Brain's ProvidersStatus: this server has one provider, the embedder (no summariser, no reranker)."""
    model_id, dimension, problem = queries.embedder_status()
    return {"config_source": None, "strict_mode": False, "validation_errors": [],
            "providers": [{"provider_type": "embedding", "provider_name": model_id.split(":", 1)[0],
                           "model": model_id, "status": "unavailable" if problem else "healthy", "message": problem,
                           "dimensions": dimension}],
            "timestamp": format_timestamp(datetime.now(UTC))}


@router.post("/query", tags=["Querying"], response_model=QueryResponse,
              summary="Search indexed documents (vector, bm25, hybrid, graph or multi)")
def post_query(body: DocumentQuery, queries: QueriesDep) -> JSONResponse:
    answer = queries.query(body).model_dump(mode="json")
    for result in answer["results"]:  # present only where the spec says they are
        if not body.mode.uses_graph:
            result.pop("graph_score", None)
        if not body.include_relationships:
            result.pop("relationships", None)
    return JSONResponse(answer)


@router.get("/query/count", tags=["Querying"], response_model=CountResponse, summary="Number of indexed chunks")
def get_count(queries: QueriesDep) -> CountResponse:
    return CountResponse(total_chunks=queries.status().counts.chunks, ready=queries.is_ready())


@router.get("/query/chunk/{chunk_id}", tags=["Querying"], summary="One chunk by id (Agent Brain's ChunkRecord)")
def get_chunk(chunk_id: str, queries: QueriesDep) -> dict[str, Any]:
    chunk, folder = queries.chunk(chunk_id)
    return {"chunk_id": chunk.id, "parent_doc_id": chunk.source, "source": chunk.source, "content": chunk.text,
            "summary": None, "folder_id": folder, "token_count": len(chunk.text.split()),  # words: no tokenizer here
            "language": chunk.metadata.language, "source_type": chunk.metadata.source_type.value,
            "metadata": {**chunk.metadata.public(), "chunk_index": chunk.index}}


def _enqueue(indexing: DocumentIndexing, body: IndexRequest, operation: IndexOperation, force: bool) -> IndexResponse:
    queued = indexing.enqueue(body.folder_path, operation, body.options(force))
    message = (f"Duplicate request: job {queued.job.id} is already queued for {queued.job.folder_path}"
               if queued.dedupe_hit else f"Job queued for {queued.job.folder_path}")
    return IndexResponse(job_id=queued.job.id, status=queued.job.status.value, message=message,
                         queue_position=queued.queue_position, queue_length=queued.queue_length,
                         dedupe_hit=queued.dedupe_hit)


@router.post("/index", tags=["Indexing"], response_model=IndexResponse, status_code=status.HTTP_202_ACCEPTED,
              summary="Index a folder: upsert its files, drop the ones gone from it")
def post_index(body: IndexRequest, indexing: IndexingDep,
               force: Annotated[bool, Query(description="Same as the body's force")] = False) -> IndexResponse:
    return _enqueue(indexing, body, IndexOperation.INDEX, force)


@router.post("/index/add", tags=["Indexing"], response_model=IndexResponse, status_code=status.HTTP_202_ACCEPTED,
              summary="Add a folder's files without removing anything already indexed")
def post_index_add(body: IndexRequest, indexing: IndexingDep,
                   force: Annotated[bool, Query(description="Same as the body's force")] = False) -> IndexResponse:
    return _enqueue(indexing, body, IndexOperation.ADD, force)


@router.delete("/index", tags=["Indexing"], response_model=IndexResponse, summary="Clear the whole index")
def delete_index(indexing: IndexingDep) -> IndexResponse:
    indexing.reset()
    return IndexResponse(job_id="reset", status="completed", message="Index cleared successfully")


@router.get("/index/jobs", tags=["Jobs"], response_model=JobListResponse, summary="Indexing jobs, newest first")
def list_jobs(indexing: IndexingDep, limit: Annotated[int, Query(ge=1, le=100)] = 50,
              offset: Annotated[int, Query(ge=0, le=100_000)] = 0) -> JobListResponse:
    page = indexing.jobs(limit, offset)
    every = indexing.jobs(100_000, 0)
    counted = {state: sum(job.status is state for job in every) for state in IndexJobStatus}
    return JobListResponse(jobs=[JobSummary.of(job) for job in page], total=len(every),
                           pending=counted[IndexJobStatus.PENDING], running=counted[IndexJobStatus.RUNNING],
                           completed=counted[IndexJobStatus.DONE], failed=counted[IndexJobStatus.FAILED])


@router.get("/index/jobs/{job_id}", tags=["Jobs"], response_model=JobDetail, summary="One job and its progress")
def get_job(job_id: str, indexing: IndexingDep) -> JobDetail:
    return JobDetail.of(indexing.job(job_id))


@router.delete("/index/jobs/{job_id}", tags=["Jobs"], response_model=CancelResponse, summary="Cancel a job")
def cancel_job(job_id: str, indexing: IndexingDep) -> CancelResponse:
    job = indexing.cancel(job_id)
    message = ("Job cancelled" if job.status is IndexJobStatus.CANCELLED
               else "Cancellation requested; the job stops after its current file")
    return CancelResponse(job_id=job.id, status=job.status.value, message=message)


@router.get("/index/folders", tags=["Folders"], response_model=FolderListResponse, summary="Indexed folders")
def list_folders(queries: QueriesDep) -> FolderListResponse:
    found = sorted(queries.status().indexed_folders, key=lambda folder: folder.folder_path)
    return FolderListResponse(folders=[FolderInfo(folder_path=folder.folder_path, chunk_count=folder.chunk_count,
                                                  file_count=folder.file_count,
                                                  last_indexed=timestamp(folder.last_indexed) or "",
                                                  watch_mode=folder.watch_mode,
                                                  watch_debounce_seconds=folder.watch_debounce_seconds)
                                       for folder in found], total=len(found))


@router.delete("/index/folders", tags=["Folders"], response_model=FolderDeleteResponse,
              summary="Remove one indexed folder's files and chunks")
def delete_folder(body: FolderDeleteRequest, indexing: IndexingDep) -> FolderDeleteResponse:
    removed = indexing.delete_folder(body.folder_path)
    return FolderDeleteResponse(folder_path=body.folder_path, chunks_deleted=removed,
                                message=f"Removed {removed} chunks")


def _cache(request: Request) -> CachingEmbedder:
    cache = _container(request).cache
    if cache is None:
        raise FeatureUnavailable("this host's record store keeps no embedding cache")
    return cache


if TYPE_CHECKING:
    CacheDep = Annotated[CachingEmbedder, Depends(_cache)]
else:
    CacheDep = Annotated[object, Depends(_cache)]


@router.get("/index/cache", tags=["Indexing"], summary="Embedding cache: entries, size, hits and misses")
def get_cache(cache: CacheDep) -> dict[str, Any]:
    stats = cache.stats()
    return {"entry_count": stats.entries, "size_bytes": stats.size_bytes, "hits": stats.hits, "misses": stats.misses,
            "hit_rate": stats.hit_rate, "mem_entries": 0}


@router.delete("/index/cache", tags=["Indexing"], summary="Clear the embedding cache")
def clear_cache(cache: CacheDep) -> dict[str, Any]:
    count, size = cache.clear()
    return {"count": count, "size_bytes": size, "size_mb": size / (1024 * 1024)}



@router.get("/graph/entity/{entity_type}/{entity_id:path}", tags=["Graph"],
            summary="One code-graph entity with its incoming and outgoing relations")
def get_graph_entity(entity_type: str, entity_id: str, queries: QueriesDep) -> dict[str, Any]:
    """Agent Brain's GraphEntityRecord. `entity_id`: the graph id (`<file>::<qualified name>`, slashes and all) or
    a qualified or simple name; 400 for a type outside Agent Brain's vocabulary, 404 when none matches."""
    return queries.entities.entity(entity_type, entity_id).body()


@router.post("/graph/project", tags=["Graph"], summary="Project pre-typed facts (not supported here: 503)")
def post_graph_project(body: GraphProjectRequest, queries: QueriesDep) -> dict[str, Any]:
    queries.entities.project(body.source_tag)
    return {}


@router.delete("/graph/project", tags=["Graph"], summary="Delete projected facts (not supported here: 503)")
def delete_graph_project(source_tag: Annotated[str, Query(min_length=1, max_length=64)],
                         queries: QueriesDep) -> dict[str, Any]:
    queries.entities.project(source_tag)
    return {}
