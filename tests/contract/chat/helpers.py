"""Builders of the chat layer's domain values for the contract suites."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from zengram.chat.domain.memories import SubjectMemory
from zengram.chat.domain.tenancy import new_id
from zengram.kernel.content import content_hash

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def memory(text: str, *, project: str = "acme", subject: str = "alice", seconds: float = 0, **fields: Any
           ) -> SubjectMemory:
    moment = at(seconds)
    values: dict[str, Any] = {"id": new_id("mem"), "project_id": project, "subject_id": subject, "text": text,
                              "text_hash": content_hash(text), "created_at": moment, "updated_at": moment}
    return SubjectMemory(**{**values, **fields})
