"""Response bodies of the audit route (the memory event stream answers server-sent events, not JSON)."""

from __future__ import annotations

from pydantic import BaseModel

from zengram.chat.domain.events import AuditEntry


class AuditRowOut(BaseModel):
    id: str
    key_id: str
    key_name: str
    method: str
    route: str
    status: int
    duration_ms: int
    subject_id: str | None
    chat_id: str | None
    session_id: str | None
    request_id: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    total_tokens: int | None
    created_at: str

    @classmethod
    def of(cls, entry: AuditEntry) -> AuditRowOut:
        return cls.model_validate(entry.model_dump(mode="json", exclude={"project_id"}))


class AuditListBody(BaseModel):
    data: list[AuditRowOut]
    count: int
    project_id: str
    next_before: str | None  # pass as `before` for the next (older) page; null on the last page
