"""Recall events: what each completion injected (prompts, state, memories, records, history, with scores and
estimated tokens) and what learning made of it. The trace of a chat is its events, oldest first."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from zengram.kernel.timestamps import format_timestamp


@dataclass(frozen=True)
class RecallConfig:
    """How much a completion's recall injects."""

    memories: int = 5  # most memories injected
    memory_relevance: float = 0.3  # least relevance of an injected memory
    records: int = 5
    record_similarity: float = 0.3


class PromptUse(BaseModel):
    id: str
    name: str
    scope: str
    tokens: int


class StateUse(BaseModel):
    key: str
    tokens: int


class MemoryUse(BaseModel):
    memory_id: str
    text: str
    score: float  # relevance × confidence × decay × importance
    relevance: float
    tokens: int


class RecordUse(BaseModel):
    record_id: str
    type_name: str
    score: float
    tokens: int


class HistoryUse(BaseModel):
    message_indexes: list[int] = Field(default_factory=list)
    tokens: int = 0


class LearningOutcome(BaseModel):
    """What a learning job did: memories created, skipped as duplicates (with the one they repeat) or superseded,
    and records inserted or updated."""

    status: str  # pending | running | done | failed (with `error`; retried until its attempts run out) | skipped
    job_id: str | None = None
    attempts: int = 0
    error: str | None = None
    created: list[str] = Field(default_factory=list)
    skipped: list[dict[str, Any]] = Field(default_factory=list)
    superseded: list[str] = Field(default_factory=list)
    records: list[str] = Field(default_factory=list)
    records_refused: list[dict[str, Any]] = Field(default_factory=list)
    claims: list[str] = Field(default_factory=list)  # claims asserted from what the model named
    filtered: list[dict[str, Any]] = Field(default_factory=list)  # memories the memory policy dropped, and why


class RecallEvent(BaseModel):
    """One completion's context, as assembled (token counts are estimates: domain/chat/tokens.py)."""

    model_config = ConfigDict(frozen=True)

    id: str
    project_id: str
    subject_id: str
    chat_id: str
    request_id: str | None = None
    provider: str
    model: str
    stream: bool = False
    prompts: list[PromptUse] = Field(default_factory=list)
    state: list[StateUse] = Field(default_factory=list)
    memories: list[MemoryUse] = Field(default_factory=list)
    records: list[RecordUse] = Field(default_factory=list)
    history: HistoryUse = Field(default_factory=HistoryUse)
    message_tokens: int = 0  # the caller's own messages
    options: dict[str, Any] = Field(default_factory=dict)  # the mnx switches in effect, and notes on ignored ones
    learning: LearningOutcome | None = None
    created_at: datetime

    @field_serializer("created_at", when_used="json")
    def _timestamp_text(self, moment: datetime) -> str:
        return format_timestamp(moment)

    @property
    def total_tokens(self) -> int:
        parts: list[PromptUse | StateUse | MemoryUse | RecordUse] = [*self.prompts, *self.state, *self.memories,
                                                                      *self.records]
        return sum(part.tokens for part in parts) + self.history.tokens + self.message_tokens

    def memory_recalls(self) -> list[dict[str, Any]]:
        """One row per memory injected: the shape of GET /memories/recalls."""
        return [{"event_id": self.id, "memory_id": use.memory_id, "chat_id": self.chat_id,
                 "subject_id": self.subject_id, "text": use.text, "score": use.score, "relevance": use.relevance,
                 "tokens": use.tokens, "recalled_at": format_timestamp(self.created_at)}
                for use in self.memories]

    def view(self) -> dict[str, Any]:
        return {**self.model_dump(mode="json"), "total_tokens": self.total_tokens, "tokens_estimated": True}
