"""The memory event stream (`GET /events/memories`, server-sent events, as the Mnexium SDK's `subscribe()` reads
it) and the request audit (`GET /audit/requests`). docs/chat.md, "Memory events" and "Audit"."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query
from fastapi.responses import StreamingResponse

from zengram.chat.api.deps import ChatDep, ProjectDep
from zengram.chat.api.schemas import CHAT_ERRORS
from zengram.chat.api.schemas.events import AuditListBody, AuditRowOut
from zengram.chat.domain.events import MAX_EVENT_ID, SESSION_PATTERN, last_event_id
from zengram.chat.domain.tenancy import SubjectId

router = APIRouter(prefix="/api/v1", tags=["chat: events and audit"], responses=CHAT_ERRORS)
STREAM_DESCRIPTION = (
    "`text/event-stream`: `connected`, then the subject's events after Last-Event-ID in order (each with `id:` its "
    "sequence number, `event:` memory.created | memory.superseded | memory.updated | memory.deleted | "
    "memory.restored | memory.recalled, `data:` JSON), a `heartbeat` event after quiet periods. With "
    "ZENGRAM_CHAT_EVENTS_WINDOW_SECONDS above 0 (AWS) the response ends once it has delivered events, or after "
    "the window; reconnect with Last-Event-ID.")
AuditCursor = Annotated[str, Query(pattern=r"^aud_[0-9a-f]{1,40}$", description="`next_before` of the last page")]
SessionId = Annotated[str, Query(pattern=SESSION_PATTERN)]


@router.get("/events/memories", response_class=StreamingResponse,
            responses={200: {"description": STREAM_DESCRIPTION, "content": {"text/event-stream": {}}}})
def memory_events(chat: ChatDep, project: ProjectDep, subject_id: SubjectId,
                  last_event_id_query: Annotated[int | None, Query(alias="last_event_id", ge=0,
                                                                   le=MAX_EVENT_ID)] = None,
                  last_event_id_header: Annotated[str | None, Header(alias="last-event-id", max_length=40)] = None,
                  ) -> StreamingResponse:
    """The subject's memory events as server-sent events, after `Last-Event-ID` (the header EventSource sends on
    reconnecting, or the `last_event_id` query parameter; 0: from the oldest retained event), else from now on."""
    after = chat.events.position(project, subject_id, last_event_id(last_event_id_header, last_event_id_query))
    return StreamingResponse(chat.events.stream(project, subject_id, after), media_type="text/event-stream",
                             headers={"cache-control": "no-cache, no-transform", "x-accel-buffering": "no"})


@router.get("/audit/requests", response_model=AuditListBody)
def audit_requests(chat: ChatDep, project: ProjectDep, subject_id: SubjectId | None = None,
                   session_id: SessionId | None = None, limit: Annotated[int, Query(ge=1, le=200)] = 50,
                   before: AuditCursor | None = None) -> AuditListBody:
    """The project's chat-layer requests, newest first: caller key name, subject, route, status, duration and
    token counts; never a provider key or a message body. Kept 30 days."""
    rows = chat.audit.recent(project, limit, before=before, subject_id=subject_id, session_id=session_id)
    return AuditListBody(data=[AuditRowOut.of(row) for row in rows], count=len(rows), project_id=project,
                         next_before=rows[-1].id if len(rows) == limit else None)
