"""Chat history (`/chat/history/list|read|delete` as the SDK calls them), the trace of a chat, learning jobs."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from zengram.chat.api import PREFIX
from zengram.chat.api.deps import ChatDep, ProjectDep
from zengram.chat.api.schemas import CHAT_ERRORS, DeletedBody
from zengram.chat.api.schemas.history import (
    ChatListBody,
    ChatOut,
    ChatReadBody,
    JobOut,
    JobsBody,
    MessageOut,
    TraceBody,
)
from zengram.chat.domain.job_status import JobStatus
from zengram.chat.domain.tenancy import ChatId, SubjectId
from zengram.kernel.request_fields import MAX_OFFSET

router = APIRouter(prefix=PREFIX, tags=["chat: history"], responses=CHAT_ERRORS)


@router.get("/chat/history/list", response_model=ChatListBody)
def list_chats(chat: ChatDep, project: ProjectDep, subject_id: SubjectId,
               limit: Annotated[int, Query(ge=1, le=500)] = 50,
               offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0) -> ChatListBody:
    return ChatListBody(chats=[ChatOut.of(c) for c in chat.history.chats(project, subject_id, limit, offset)])


@router.get("/chat/history/read", response_model=ChatReadBody)
def read_chat(chat: ChatDep, project: ProjectDep, subject_id: SubjectId, chat_id: ChatId,
              limit: Annotated[int, Query(ge=1, le=1000)] = 200) -> ChatReadBody:
    messages = [MessageOut.of(m) for m in chat.history.read(project, subject_id, chat_id, limit)]
    return ChatReadBody(chat_id=chat_id, data=messages, messages=messages, count=len(messages))


@router.delete("/chat/history/delete", response_model=DeletedBody)
def delete_chat(chat: ChatDep, project: ProjectDep, subject_id: SubjectId, chat_id: ChatId) -> DeletedBody:
    chat.history.delete(project, subject_id, chat_id)
    return DeletedBody(ok=True, deleted=True)


@router.get("/chat/trace", response_model=TraceBody)
def chat_trace(chat: ChatDep, project: ProjectDep, chat_id: ChatId,
               limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> TraceBody:
    """Every completion of the chat, oldest first: what was injected (scores, estimated tokens) and what learning
    made of it."""
    events = [event.view() for event in chat.recalls.trace(project, chat_id, limit)]
    return TraceBody(chat_id=chat_id, events=events, count=len(events))


@router.get("/chat/learning", response_model=JobsBody)
def learning_jobs(chat: ChatDep, project: ProjectDep, chat_id: ChatId | None = None, status: JobStatus | None = None,
                  limit: Annotated[int, Query(ge=1, le=500)] = 50) -> JobsBody:
    """Learning jobs, newest first: pending, running, done, or failed with their last error."""
    jobs = chat.learning.jobs(project, chat_id, status, limit)
    return JobsBody(jobs=[JobOut.of(job) for job in jobs], count=len(jobs))


@router.post("/chat/learning/{job_id}/retry", response_model=JobOut)
def retry_learning(job_id: str, chat: ChatDep, project: ProjectDep) -> JobOut:
    """A failed job gets a fresh set of attempts."""
    return JobOut.of(chat.learning.retry(project, job_id))
