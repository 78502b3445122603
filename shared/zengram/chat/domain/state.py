"""Agent state: a subject's short-lived working context, JSON values by key, optionally expiring."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, StringConstraints, field_serializer

from zengram.kernel.timestamps import format_timestamp

STATE_KEY_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.:@+=-]{0,127}$"
StateKey = Annotated[str, StringConstraints(pattern=STATE_KEY_PATTERN)]


class AgentState(BaseModel):
    model_config = ConfigDict(frozen=True)

    project_id: str
    subject_id: str
    key: str
    value: Any
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None = None

    @field_serializer("created_at", "updated_at", "expires_at", when_used="json")
    def _timestamp_text(self, moment: datetime | None) -> str | None:
        return format_timestamp(moment) if moment is not None else None

    def is_live(self, now: datetime) -> bool:
        """Expired state reads as absent (a store may remove it later)."""
        return self.expires_at is None or self.expires_at > now

    def replaced(self, value: Any, expires_at: datetime | None, at: datetime) -> AgentState:
        return self.model_copy(update={"value": value, "expires_at": expires_at, "updated_at": at})
