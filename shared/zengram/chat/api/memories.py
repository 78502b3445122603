"""Subject memories: `/memories` as the Mnexium SDK calls it."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from zengram.chat.api.audit import note_subject
from zengram.chat.api.deps import ChatDep, ProjectDep
from zengram.chat.api.schemas import CHAT_ERRORS, DeletedBody
from zengram.chat.api.schemas.memories import (
    MemoryCreatedBody,
    MemoryHitOut,
    MemoryListBody,
    MemoryOut,
    MemorySearchBody,
    MemoryUpdatedBody,
    RecallsBody,
    RestoredBody,
)
from zengram.chat.domain.data_requests import MemoryCreate, MemoryPatch
from zengram.chat.domain.tenancy import ChatId, SubjectId
from zengram.kernel.request_fields import MAX_OFFSET

router = APIRouter(prefix="/api/v1", tags=["chat: memories"], responses=CHAT_ERRORS)
Limit = Annotated[int, Query(ge=1, le=200)]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]
MemoryId = Annotated[str, Query(min_length=1, max_length=100)]


@router.get("/memories", response_model=MemoryListBody)
def list_memories(chat: ChatDep, project: ProjectDep, subject_id: SubjectId, limit: Limit = 50, offset: Offset = 0,
                  include_superseded: bool = False, include_deleted: bool = False) -> MemoryListBody:
    found = chat.memories.of_subject(project, subject_id, limit=limit, offset=offset,
                                     include_superseded=include_superseded, include_deleted=include_deleted)
    return MemoryListBody(data=[MemoryOut.of(memory) for memory in found], count=len(found))


@router.post("/memories", status_code=201, response_model=MemoryCreatedBody,
             responses={200: {"model": MemoryCreatedBody, "description": "Skipped: a duplicate of an active memory"}})
def create_memory(body: MemoryCreate, chat: ChatDep, project: ProjectDep, request: Request,
                  response: Response) -> MemoryCreatedBody:
    from zengram.chat.services.memories import NewMemory  # imported with the chat layer, not at a function's init

    note_subject(request, body.subject_id)
    outcome = chat.memories.create(project, NewMemory.of(body), no_supersede=bool(body.no_supersede))
    if outcome.memory is None:
        response.status_code = 200
        duplicate = outcome.duplicate_of
        return MemoryCreatedBody(id=None, subject_id=body.subject_id, text=body.text,
                                 kind=(body.kind or NewMemory.kind).value,
                                 created=False, skipped=True, reason="duplicate",
                                 duplicate_of=duplicate.id if duplicate else None, similarity=outcome.similarity,
                                 versioning=outcome.versioning)
    memory = outcome.memory
    return MemoryCreatedBody(id=memory.id, subject_id=memory.subject_id, text=memory.text, kind=memory.kind.value,
                             created=True, superseded_count=len(outcome.superseded),
                             superseded_ids=[old.id for old in outcome.superseded], versioning=outcome.versioning,
                             memory=MemoryOut.of(memory))


@router.get("/memories/search", response_model=MemorySearchBody)
def search_memories(chat: ChatDep, project: ProjectDep, subject_id: SubjectId,
                    q: Annotated[str, Query(min_length=1, max_length=1000, pattern=r"\S")], limit: Limit = 25,
                    min_score: Annotated[float, Query(ge=0, le=100)] = 0.0) -> MemorySearchBody:
    """`score` is relevance × confidence × decay × importance, 0–1; a `min_score` above 1 is read as a percentage."""
    floor = min_score / 100 if min_score > 1 else min_score
    hits = chat.memories.search(project, subject_id, q, limit=limit, min_score=floor)
    return MemorySearchBody(query=q, count=len(hits), data=[
        MemoryHitOut(**MemoryOut.of(hit.memory).model_dump(), score=hit.score, relevance=hit.relevance)
        for hit in hits])


@router.get("/memories/superseded", response_model=MemoryListBody)
def superseded_memories(chat: ChatDep, project: ProjectDep, subject_id: SubjectId, limit: Limit = 50,
                        offset: Offset = 0) -> MemoryListBody:
    found = chat.memories.superseded(project, subject_id, limit=limit, offset=offset)
    return MemoryListBody(data=[MemoryOut.of(memory) for memory in found], count=len(found))


@router.get("/memories/recalls", response_model=RecallsBody)
def memory_recalls(chat: ChatDep, project: ProjectDep, chat_id: ChatId | None = None, memory_id: MemoryId | None = None,
                   limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> RecallsBody:
    """Which memories were injected: into one chat (oldest first), of one memory (newest first), else the
    project's latest."""
    rows = chat.recalls.recalls(project, chat_id=chat_id, memory_id=memory_id, limit=limit)
    return RecallsBody(data=rows, count=len(rows), chat_id=chat_id, memory_id=memory_id)


@router.get("/memories/{memory_id}", response_model=MemoryOut)
def get_memory(memory_id: str, chat: ChatDep, project: ProjectDep) -> MemoryOut:
    return MemoryOut.of(chat.memories.get(project, memory_id))


@router.patch("/memories/{memory_id}", response_model=MemoryUpdatedBody)
def patch_memory(memory_id: str, body: MemoryPatch, chat: ChatDep, project: ProjectDep) -> MemoryUpdatedBody:
    memory = chat.memories.patch(project, memory_id, body)
    return MemoryUpdatedBody(id=memory.id, updated=True, memory=MemoryOut.of(memory))


@router.delete("/memories/{memory_id}", response_model=DeletedBody)
def delete_memory(memory_id: str, chat: ChatDep, project: ProjectDep) -> DeletedBody:
    return DeletedBody(ok=True, deleted=chat.memories.delete(project, memory_id))


@router.post("/memories/{memory_id}/restore", response_model=RestoredBody)
def restore_memory(memory_id: str, chat: ChatDep, project: ProjectDep) -> RestoredBody:
    restored, memory = chat.memories.restore(project, memory_id)
    return RestoredBody(ok=True, restored=restored, id=memory.id, subject_id=memory.subject_id, text=memory.text,
                        message=None if restored else "Memory is already active")
