"""Agent state: a subject's JSON values by key, with optional TTL, and what `state.load` injects."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from zengram.chat.domain.state import AgentState
from zengram.chat.ports import AgentStateStore
from zengram.kernel.content import Scrubber
from zengram.kernel.errors import NotFound
from zengram.kernel.ports import Clock


class AgentStateService:
    def __init__(self, store: AgentStateStore, clock: Clock, scrubber: Scrubber) -> None:
        self._store = store
        self._clock = clock
        self._scrubber = scrubber

    def put(self, project_id: str, subject_id: str, key: str, value: Any, ttl_seconds: int | None) -> AgentState:
        now = self._clock.now()
        expires = now + timedelta(seconds=ttl_seconds) if ttl_seconds is not None else None
        return self._store.put(AgentState(project_id=project_id, subject_id=subject_id, key=key,
                                          value=self._scrubber.scrub_value(value), created_at=now, updated_at=now,
                                          expires_at=expires))

    def get(self, project_id: str, subject_id: str, key: str) -> AgentState:
        state = self._store.get(project_id, subject_id, key, self._clock.now())
        if state is None:
            raise NotFound(f"state '{key}' of subject {subject_id} not found")
        return state

    def delete(self, project_id: str, subject_id: str, key: str) -> None:
        if not self._store.delete(project_id, subject_id, key, self._clock.now()):
            raise NotFound(f"state '{key}' of subject {subject_id} not found")

    def load(self, project_id: str, subject_id: str, key: str | None) -> list[AgentState]:
        """What `state.load` injects: one key, or every live key of the subject."""
        now = self._clock.now()
        if key is not None:
            state = self._store.get(project_id, subject_id, key, now)
            return [state] if state is not None else []
        return self._store.list_live(project_id, subject_id, now)
