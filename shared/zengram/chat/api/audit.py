"""The request audit's recorder: pure ASGI middleware around a host's app that, for each request under `/api/v1`
by an authenticated caller, records one `AuditEntry` once the response has been sent (docs/chat.md, "Audit").

What it reads: the caller (`Principal`: key id and name, never the key), the project (as the routes resolve it),
the route's template, the status, the time until the last body byte, the subject and chat (path, query,
`x-subject-id`, the `x-mnx-subject-id` / `x-mnx-chat-id` answer headers, or what a route noted with
`note_subject`), a well-formed `x-session-id`, the
request id and the token counts a completion left in the request state. Never a header value but those, never a
body. A request no project can be named for (no key, a key of several clients without the header) is not recorded:
there is no tenant to file it under. The listing itself (`GET /audit/requests`) is not recorded."""

from __future__ import annotations

import logging
import re
import time
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs

from fastapi import FastAPI, Request
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from zengram.chat.api import PREFIX
from zengram.chat.domain.events import SESSION_HEADER, SESSION_PATTERN, AuditEntry, TokenUsage, audit_id
from zengram.chat.domain.tenancy import NAME_PATTERN, PROJECT_HEADER, resolve_project
from zengram.kernel.keys import Principal
from zengram.kernel.outbox import describe_error

logger = logging.getLogger(__name__)
USAGE_STATE = "chat_usage"  # where a completion leaves its TokenUsage (`request.state.chat_usage`)
SUBJECT_STATE = "chat_subject"  # where a route whose subject is in its body names it (`note_subject`)
NOT_AUDITED = frozenset({f"{PREFIX}/audit/requests"})
_SESSION = re.compile(SESSION_PATTERN)
_NAME = re.compile(NAME_PATTERN)


def note_subject(request: Request, subject_id: str) -> None:
    """Names the request's subject for its audit row when only the body says it (the recorder reads no body)."""
    request.scope.setdefault("state", {})[SUBJECT_STATE] = subject_id


def audited(app: FastAPI) -> FastAPI:
    """`app` with the chat layer's request audit (the hosts that mount chat routes call this once)."""
    app.add_middleware(ChatAuditMiddleware)
    return app


class ChatAuditMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not path.startswith(f"{PREFIX}/") or path in NOT_AUDITED:
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        answer: dict[str, Any] = {"status": 500, "headers": Headers()}

        async def observed(message: Message) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
                answer["headers"] = Headers(raw=message.get("headers", []))
            await send(message)

        try:
            await self.app(scope, receive, observed)
        finally:
            duration_ms = int((time.monotonic() - started) * 1000)
            await run_in_threadpool(_record, scope, answer["status"], answer["headers"], duration_ms)


def _record(scope: Scope, status: int, answer: Headers, duration_ms: int) -> None:
    try:
        audit = scope["app"].state.provider.get().chat.audit
        entry = _entry(scope, status, answer, duration_ms, audit.clock.now())
        if entry is not None:
            audit.record(entry)
    except Exception as error:  # the answer has gone out: an audit that cannot be written is a warning
        logger.warning("audit row not recorded: %s", describe_error(error))


def _entry(scope: Scope, status: int, answer: Headers, duration_ms: int, now: datetime) -> AuditEntry | None:
    state: dict[str, Any] = scope.get("state") or {}
    principal = state.get("principal")
    if not isinstance(principal, Principal):
        return None
    asked = Headers(scope=scope)
    try:
        project = resolve_project(principal.scope, asked.get(PROJECT_HEADER))
    except Exception:
        return None
    query = {name: values[0] for name, values in parse_qs(scope.get("query_string", b"").decode("latin-1")).items()}
    path_params: dict[str, Any] = scope.get("path_params") or {}
    subject = _name(path_params.get("subject_id"), query.get("subject_id"), asked.get("x-subject-id"),
                    answer.get("x-mnx-subject-id"), state.get(SUBJECT_STATE))
    chat = _name(query.get("chat_id"), answer.get("x-mnx-chat-id"))
    session = asked.get(SESSION_HEADER)
    usage = state.get(USAGE_STATE)
    tokens = usage.model_dump() if isinstance(usage, TokenUsage) else {}
    route = scope.get("route")
    request_id = state.get("request_id")
    return AuditEntry(
        id=audit_id(now), project_id=project, key_id=principal.key_id, key_name=principal.name,
        method=scope.get("method", ""), route=getattr(route, "path", None) or scope.get("path", ""), status=status,
        duration_ms=duration_ms, subject_id=subject, chat_id=chat,
        session_id=session if session and _SESSION.match(session) else None,
        request_id=request_id if isinstance(request_id, str) else None, created_at=now, **tokens)


def _name(*candidates: object) -> str | None:
    """The first candidate that is a well-formed subject or chat id."""
    for candidate in candidates:
        if isinstance(candidate, str) and _NAME.match(candidate):
            return candidate
    return None
