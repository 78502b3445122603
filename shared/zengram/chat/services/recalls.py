"""Recall events: every completion's trace, readable by chat and by memory."""

from __future__ import annotations

from typing import Any

from zengram.chat.domain.recalls import LearningOutcome, RecallEvent
from zengram.chat.ports import RecallEventStore


class RecallService:
    def __init__(self, store: RecallEventStore) -> None:
        self._store = store

    def record(self, event: RecallEvent) -> None:
        self._store.record(event)

    def report_learning(self, event_id: str, outcome: LearningOutcome) -> None:
        self._store.set_learning(event_id, outcome)

    def recalls(self, project_id: str, *, chat_id: str | None, memory_id: str | None,
                limit: int) -> list[dict[str, Any]]:
        """One row per injected memory: of a chat (oldest first), of a memory (newest first), else the project's
        newest."""
        if memory_id is not None:
            events = self._store.for_memory(project_id, memory_id, limit)
            rows = [row for event in events for row in event.memory_recalls() if row["memory_id"] == memory_id]
        elif chat_id is not None:
            rows = [row for event in self._store.for_chat(project_id, chat_id, limit) for row in event.memory_recalls()]
        else:
            rows = [row for event in self._store.latest(project_id, limit) for row in event.memory_recalls()]
        return rows[:limit]

    def trace(self, project_id: str, chat_id: str, limit: int) -> list[RecallEvent]:
        return self._store.for_chat(project_id, chat_id, limit)

    def get(self, event_id: str) -> RecallEvent | None:
        return self._store.get(event_id)
