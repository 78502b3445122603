"""Response bodies of the state routes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from zengram.chat.domain.state import AgentState


class StateOut(BaseModel):
    key: str
    value: Any
    subject_id: str
    ttl: str | None  # Mnexium's name for the expiry
    expires_at: str | None
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, state: AgentState) -> StateOut:
        shown = state.model_dump(mode="json")
        return cls(key=state.key, value=state.value, subject_id=state.subject_id, ttl=shown["expires_at"],
                   expires_at=shown["expires_at"], created_at=shown["created_at"], updated_at=shown["updated_at"])

