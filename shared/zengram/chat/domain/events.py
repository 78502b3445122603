"""What the chat layer records about itself: the memory event log (`GET /events/memories`, server-sent events) and
the request audit (`GET /audit/requests`). Pure: the models, the event's wire form, retention; no I/O."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from zengram.kernel.errors import InvalidInput
from zengram.kernel.timestamps import format_timestamp

AUDIT_RETENTION = timedelta(days=30)  # audit rows older than this are removed (docs/chat.md, "Audit")
EVENT_RETENTION = timedelta(days=7)  # memory events older than this are removed: resume within a week
MAX_EVENT_ID = 2**53
SESSION_HEADER = "x-session-id"
SESSION_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.:@+=-]{0,199}$"


@dataclass(frozen=True)
class StreamConfig:
    """How `GET /events/memories` streams: a heartbeat after `heartbeat` quiet seconds, the log read every `poll`
    seconds; `window` 0 streams until the client leaves, above 0 each response ends once it has delivered events
    or after `window` seconds (a long poll, for hosts whose gateway buffers responses)."""

    heartbeat: float = 30.0
    poll: float = 1.0
    window: float = 0.0
    batch: int = 100  # events read (and sent) per read of the log


class MemoryEventType(StrEnum):
    CREATED = "memory.created"
    UPDATED = "memory.updated"
    SUPERSEDED = "memory.superseded"
    RESTORED = "memory.restored"
    DELETED = "memory.deleted"
    RECALLED = "memory.recalled"


class NewMemoryEvent(BaseModel):
    """An event to append to a subject's log (the store numbers it)."""

    model_config = ConfigDict(frozen=True)

    project_id: str
    subject_id: str
    type: MemoryEventType
    data: dict[str, Any]
    created_at: datetime


class MemoryEvent(NewMemoryEvent):
    """One recorded event: `seq` increases by one per event of its (project, subject), gap-free, in the order the
    events were recorded; it is the SSE `id`, so a client resumes after it with `Last-Event-ID`."""

    seq: int

    @field_serializer("created_at", when_used="json")
    def _timestamp_text(self, moment: datetime) -> str:
        return format_timestamp(moment)

    def sse(self) -> str:
        """The event in the wire form the Mnexium SDK parses: `id`, `event` and one `data:` line of JSON."""
        data = {**self.data, "event_id": self.seq, "timestamp": format_timestamp(self.created_at)}
        return f"id: {self.seq}\nevent: {self.type.value}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def sse_event(name: str, data: dict[str, Any], *, retry_ms: int | None = None, event_id: int | None = None) -> str:
    """An event of the stream itself (connected, heartbeat, error). `connected` carries the position the stream
    starts from as its `id`, so an EventSource that reconnects before any memory event resumes from there."""
    retry = f"retry: {retry_ms}\n" if retry_ms is not None else ""
    position = f"id: {event_id}\n" if event_id is not None else ""
    return f"{retry}{position}event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def last_event_id(header: str | None, query: int | None) -> int | None:
    """Where a subscription resumes: after the `Last-Event-ID` header's event (what EventSource sends when it
    reconnects), else the `last_event_id` query parameter's (0: from the oldest retained event); None (from now
    on) when neither is given. A header that is not a number is not one of ours and is ignored; a number beyond
    2^53 is refused."""
    given = (header or "").strip()
    if given.isascii() and given.isdigit():
        if int(given) > MAX_EVENT_ID:
            raise InvalidInput("Last-Event-ID", f"at most {MAX_EVENT_ID}")
        return int(given)
    return query


class AuditEntry(BaseModel):
    """One chat-layer request as the audit keeps it: who (the key's name and id, never the key), about whom, which
    route, how it ended and how long it took, the tokens the provider counted. Never a provider key, a header
    value other than the session id, or a message body."""

    model_config = ConfigDict(frozen=True)

    id: str  # `aud_` + microseconds since the epoch (16 digits) + 8 hex: ids sort by time
    project_id: str
    key_id: str
    key_name: str
    method: str
    route: str  # the route's template (`/api/v1/memories/{memory_id}`), or the path when no route matched
    status: int
    duration_ms: int
    subject_id: str | None = None
    chat_id: str | None = None
    session_id: str | None = None
    request_id: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    created_at: datetime

    @field_serializer("created_at", when_used="json")
    def _timestamp_text(self, moment: datetime) -> str:
        return format_timestamp(moment)


def audit_id(moment: datetime) -> str:
    """A row id that sorts by time (then at random within a microsecond)."""
    return f"aud_{int(moment.timestamp() * 1_000_000):016d}{uuid.uuid4().hex[:8]}"


class TokenUsage(BaseModel):
    """The token counts of one completion, as the provider's `usage` reported them."""

    prompt_tokens: int | None = Field(default=None, ge=0)
    completion_tokens: int | None = Field(default=None, ge=0)
    total_tokens: int | None = Field(default=None, ge=0)

    @classmethod
    def of(cls, usage: object) -> TokenUsage | None:
        """The counts in a provider's `usage` object (OpenAI's names, or Anthropic's input/output), else None."""
        if not isinstance(usage, dict):
            return None
        prompt = _count(usage.get("prompt_tokens", usage.get("input_tokens")))
        completion = _count(usage.get("completion_tokens", usage.get("output_tokens")))
        total = _count(usage.get("total_tokens"))
        if total is None and prompt is not None and completion is not None:
            total = prompt + completion
        return cls(prompt_tokens=prompt, completion_tokens=completion, total_tokens=total)


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
