"""Response bodies of the subject memory routes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from zengram.chat.domain.memories import SubjectMemory


class MemoryOut(BaseModel):
    """A subject memory (Mnexium's fields)."""

    id: str
    project_id: str
    subject_id: str
    text: str
    kind: str
    importance: int
    visibility: str
    confidence: float
    source: str
    is_temporal: bool
    tags: list[str]
    metadata: dict[str, Any]
    status: str
    superseded_by: str | None
    supersedes: list[str]
    seen_count: int
    last_seen_at: str | None
    chat_id: str | None
    created_at: str
    updated_at: str
    is_deleted: bool

    @classmethod
    def of(cls, memory: SubjectMemory) -> MemoryOut:
        shown = memory.model_dump(mode="json", exclude={"text_hash", "revision", "deleted_at"})
        return cls(**shown, is_deleted=memory.is_deleted)


class MemoryHitOut(MemoryOut):
    score: float
    relevance: float


class MemoryListBody(BaseModel):
    data: list[MemoryOut]
    count: int


class MemorySearchBody(BaseModel):
    data: list[MemoryHitOut]
    query: str
    count: int


class MemoryCreatedBody(BaseModel):
    """201 when created (with what it superseded), 200 when skipped as a duplicate."""

    id: str | None
    subject_id: str
    text: str
    kind: str
    created: bool
    skipped: bool = False
    reason: str | None = None
    duplicate_of: str | None = None
    similarity: float | None = None
    superseded_count: int = 0
    superseded_ids: list[str] = []
    versioning: str
    memory: MemoryOut | None = None


class MemoryUpdatedBody(BaseModel):
    id: str
    updated: bool
    memory: MemoryOut


class RestoredBody(BaseModel):
    ok: bool
    restored: bool
    id: str
    subject_id: str
    text: str
    message: str | None = None


class RecallsBody(BaseModel):
    data: list[dict[str, Any]]
    count: int
    chat_id: str | None = None
    memory_id: str | None = None

