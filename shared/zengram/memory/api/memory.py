"""The Zengram core: store, search, query, update, delete, restore."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, BackgroundTasks, Body, Query, Response

from zengram.kernel.timestamps import format_timestamp
from zengram.memory.api.deps import MemoryServiceDep
from zengram.memory.api.schemas import COMPACT_CHARS, CONFLICT, NOT_FOUND, truncate
from zengram.memory.api.schemas.memory import (
    AccessBody,
    ChainLinkBody,
    ConfidencePointBody,
    CorroboratedBody,
    CorroborationBody,
    DecayBody,
    DeduplicatedBody,
    DeleteBody,
    ExistingMemoryBody,
    HistoryEventBody,
    MemoryHistoryBody,
    QueryBody,
    RestoreBody,
    RetrievalBody,
    SearchBody,
    StoredBody,
    StoredIn,
    StoreOutcomeBody,
    UpdateBody,
    search_hit,
)
from zengram.memory.api.schemas.records import MemoryRecord
from zengram.memory.domain.history import MemoryHistory
from zengram.memory.domain.models import Memory, RecordQuery, WriteKind
from zengram.memory.domain.requests import DeleteRequest, MemoryDraft, MemoryPatch, SearchRequest, StructuredQuery
from zengram.memory.domain.scoring import DECAYING_TYPES
from zengram.web.access import ScopeDep
from zengram.web.schemas import ERROR_RESPONSES, documented_error

if TYPE_CHECKING:  # types only: the service is built (and imported) with the container
    from zengram.memory.services.memory import StoreResult
    from zengram.memory.services.search import SearchResult

router = APIRouter(tags=["memory"], responses=ERROR_RESPONSES)

DEFAULT_AGENT = "claude-code"  # Zengram v4 attributes writes without an agent to its single admin identity


# Which body answers depends on the outcome, so each status documents its own (response_model=None: no union).
@router.post("/memory", status_code=201, response_model=None,
             responses={201: {"model": StoredBody, "description": "Stored: a new memory"},
                        200: {"model": ExistingMemoryBody,
                              "description": "Already stored: deduplicated (same agent) or corroborated (another)"}})
def store_memory(draft: MemoryDraft, memories: MemoryServiceDep, scope: ScopeDep) -> Response:
    result = memories.store(draft, scope)
    # Serialised here, on the worker thread, as the search does: returned as a model, the body would go through
    # FastAPI's generic encoder and JSONResponse on the event loop (~50 µs a write against ~3 µs, #38).
    status = 201 if result.kind is WriteKind.CREATED else 200
    return Response(store_body(result).model_dump_json(by_alias=True), status_code=status,
                    media_type="application/json")


def store_body(result: StoreResult) -> StoreOutcomeBody:
    memory = result.memory
    if result.kind is WriteKind.DEDUPLICATED:
        return DeduplicatedBody(id=memory.id, type=memory.type.value, content_hash=memory.content_hash,
                                message=DUPLICATE_MESSAGE, stored_in=ALREADY_STORED, observed_by=memory.observed_by,
                                observation_count=memory.observation_count)
    if result.kind is WriteKind.CORROBORATED:
        return CorroboratedBody(id=memory.id, type=memory.type.value, content_hash=memory.content_hash,
                                observed_by_count=len(memory.observed_by), message=CORROBORATED_MESSAGE,
                                stored_in=ALREADY_STORED, observed_by=memory.observed_by,
                                observation_count=memory.observation_count)
    warnings = [*result.warnings, *([] if result.indexed else [NOT_INDEXED_YET])]
    return StoredBody(id=memory.id, type=memory.type.value, content_hash=memory.content_hash,
                      supersedes=memory.supersedes, stored_in=StoredIn(vector=result.indexed, structured_db=True),
                      warning="; ".join(warnings) or None)


# Upstream Zengram's words, which its clients show as they are.
DUPLICATE_MESSAGE = "Exact duplicate — returning existing memory"
CORROBORATED_MESSAGE = "Duplicate content from a different agent — recorded as corroboration"
ALREADY_STORED = StoredIn(vector=True, structured_db=True)
NOT_INDEXED_YET = ("stored, but not in the search index yet (it is unavailable): the repair sweep indexes it once "
                   "the index is back; GET /memory/{id} and /memory/query see it now")
SEARCH_UNAVAILABLE: dict[int | str, dict[str, Any]] = {503: documented_error(
    "The search index is unavailable (or built with another embedding model): "
    "`{error, query, retrieval: {degraded: true, reason}}`. Records stay readable via /memory/query.")}


@router.get("/memory/search", response_model=SearchBody, responses=SEARCH_UNAVAILABLE)
def search_memories(
    request: Annotated[SearchRequest, Query()], memories: MemoryServiceDep, background: BackgroundTasks,
    scope: ScopeDep,
) -> Response:
    result = memories.search(request, scope)
    if request.counts_access:
        background.add_task(memories.reinforce, [hit.memory.id for hit in result.hits])
    retried = result.expanded_query is not None
    body = SearchBody(query=result.query, expanded_query=result.expanded_query, count=len(result.hits),
                      results=[search_hit(hit, request.format.value) for hit in result.hits],
                      retry=True if retried else None,
                      retrieval=_retrieval(result, full=request.format.value == "full"))
    # Serialised once, here: returned as a model, the body would be validated again against `response_model`
    # (which still documents it), on a worker thread, before FastAPI serialises it the same way.
    return Response(body.model_dump_json(by_alias=True), media_type="application/json")


def _retrieval(result: SearchResult, *, full: bool) -> RetrievalBody | None:
    """The retrieval block: with `format=full`, and whatever the format when some path could not answer (as
    upstream Zengram does). It says which extras were applied (docs/retrieval-extras.md)."""
    if not full and not result.failed_paths:
        return None
    body = RetrievalBody.model_validate(result.retrieval())
    if result.failed_paths:
        return body.model_copy(update={"degraded": True, "reason": result.degraded_reason,
                                       "failed_paths": result.failed_paths})
    return body


@router.get("/memory/query", response_model=QueryBody)
def query_memories(request: Annotated[StructuredQuery, Query()], memories: MemoryServiceDep,
                   scope: ScopeDep) -> QueryBody:
    found = memories.query(RecordQuery(
        type=request.type.memory_type, source_agent=request.source_agent, client_id=request.client_id,
        category=request.category, key=request.key, subject=request.subject, since=request.since,
        include_inactive=request.include_superseded, limit=request.limit, offset=request.offset,
    ), scope)
    return QueryBody(type=request.type.value, count=len(found), results=found)


@router.get("/memory/{memory_id}", response_model=MemoryRecord, responses=NOT_FOUND)
def get_memory(memory_id: str, memories: MemoryServiceDep, scope: ScopeDep) -> MemoryRecord:
    return memories.get(memory_id, scope)


@router.get("/memory/{memory_id}/history", response_model=MemoryHistoryBody, responses=NOT_FOUND)
def memory_history(memory_id: str, memories: MemoryServiceDep, scope: ScopeDep) -> MemoryHistoryBody:
    """The supersede chain, corroborations, accesses and confidence over time (docs/dashboard.md). The record
    keeps counters, not a log: the last corroboration and the last access are named, with their counts."""
    return history_body(memories.history(memory_id, scope), memories.decay_factor)


def history_body(history: MemoryHistory, decay_factor: float) -> MemoryHistoryBody:
    memory = history.memory
    return MemoryHistoryBody(
        id=memory.id,
        memory=memory,
        chain=[_chain_link(version) for version in history.chain],
        corroboration=CorroborationBody(source_agent=memory.source_agent, observed_by=memory.observed_by,
                                        observation_count=memory.observation_count,
                                        last_observed_at=_stamp(memory.last_observed_at)),
        access=AccessBody(access_count=memory.access_count, last_accessed_at=_stamp(memory.last_accessed_at)),
        decay=DecayBody(decays=memory.type in DECAYING_TYPES, factor=decay_factor, confidence=memory.confidence,
                        effective_confidence=history.effective_confidence,
                        curve=[ConfidencePointBody(at=format_timestamp(point.at), confidence=point.confidence,
                                                   projected=point.projected) for point in history.curve]),
        events=[HistoryEventBody(at=format_timestamp(event.at), kind=event.kind.value, memory_id=event.memory_id,
                                 detail=event.detail) for event in history.events],
    )


def _chain_link(memory: Memory) -> ChainLinkBody:
    return ChainLinkBody(id=memory.id, content=truncate(memory.content, COMPACT_CHARS),
                         source_agent=memory.source_agent, active=memory.active,
                         created_at=format_timestamp(memory.created_at), supersedes=memory.supersedes,
                         superseded_by=memory.superseded_by, superseded_at=_stamp(memory.superseded_at),
                         deleted_at=_stamp(memory.deleted_at))


def _stamp(moment: datetime | None) -> str | None:
    return format_timestamp(moment) if moment is not None else None


@router.patch("/memory/{memory_id}", response_model=UpdateBody, responses={**NOT_FOUND, **CONFLICT})
def update_memory(memory_id: str, patch: MemoryPatch, memories: MemoryServiceDep, scope: ScopeDep) -> UpdateBody:
    result = memories.update(memory_id, patch, scope=scope)
    return UpdateBody(id=memory_id, updated=True, updated_at=format_timestamp(result.memory.updated_at),
                      updated_fields=result.updated_fields)


@router.delete("/memory/{memory_id}", response_model=DeleteBody, responses=NOT_FOUND)
def delete_memory(
    memory_id: str, memories: MemoryServiceDep, scope: ScopeDep, body: Annotated[DeleteRequest | None, Body()] = None
) -> DeleteBody:

    request = body or DeleteRequest()
    before = memories.get(memory_id, scope)
    deleted = memories.delete(memory_id, by=request.source_agent or DEFAULT_AGENT, reason=request.reason,
                              scope=scope)
    assert deleted.deleted_at is not None and deleted.deleted_by is not None
    # Upstream answers `already_inactive` for a memory that was inactive; a superseded one is still marked
    # deleted here, so it leaves `include_superseded` searches and cannot be restored.
    return DeleteBody(id=memory_id, deleted=True, deleted_at=format_timestamp(deleted.deleted_at),
                      deleted_by=deleted.deleted_by, reason=deleted.delete_reason,
                      already_inactive=True if not before.active else None,
                      message=ALREADY_INACTIVE if not before.active else None)


ALREADY_INACTIVE = "Memory was already inactive"


@router.post("/memory/{memory_id}/restore", response_model=RestoreBody, responses={**NOT_FOUND, **CONFLICT})
def restore_memory(memory_id: str, memories: MemoryServiceDep, scope: ScopeDep) -> RestoreBody:
    before = memories.get(memory_id, scope)
    changed = memories.restore(memory_id, scope)
    if before.active:
        return RestoreBody(id=memory_id, restored=False, active=True, superseded=[],
                           message="memory is already active")
    displaced = [memory.id for memory in changed[1:]]
    return RestoreBody(id=memory_id, restored=True, active=True, superseded=displaced,
                       message="memory restored" + (f"; superseded {', '.join(displaced)}" if displaced else ""))
