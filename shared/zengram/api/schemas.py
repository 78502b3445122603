"""Response bodies, typed so the OpenAPI document (and the SDK) knows their shape."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from zengram.domain.models import Memory
from zengram.domain.scoring import ScoredMemory

COMPACT_CHARS = 200
PREVIEW_CHARS = 120


class ErrorBody(BaseModel):
    error: str


class HealthBody(BaseModel):
    status: str
    service: str
    timestamp: str


class StoredIn(BaseModel):
    vector: bool
    structured_db: bool


class StoreBody(BaseModel):
    """Every field a POST /memory answer can carry; which ones appear depends on the outcome."""

    model_config = ConfigDict(extra="allow")

    id: str
    type: str
    content_hash: str
    deduplicated: bool
    corroborated: bool | None = None
    supersedes: str | None = None
    stored_in: StoredIn | None = None
    observed_by: list[str] | None = None
    observation_count: int | None = None
    message: str | None = None
    warning: str | None = None


class SearchBody(BaseModel):
    query: str
    count: int
    results: list[dict[str, Any]]
    retrieval: dict[str, Any] | None = None


class QueryBody(BaseModel):
    type: str
    count: int
    results: list[dict[str, Any]]


class UpdateBody(BaseModel):
    id: str
    updated: bool
    updated_at: str
    updated_fields: list[str]


class DeleteBody(BaseModel):
    id: str
    deleted: bool
    deleted_at: str
    deleted_by: str
    reason: str | None = None


class RestoreBody(BaseModel):
    id: str
    restored: bool
    active: bool
    superseded: list[str]
    message: str


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "Invalid input; the message names the field"},
    401: {"model": ErrorBody, "description": "Missing or invalid x-api-key"},
}
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ErrorBody, "description": "No such memory"}}
CONFLICT: dict[int | str, dict[str, Any]] = {409: {"model": ErrorBody, "description": "Conflicting state"}}


def full_record(memory: Memory) -> dict[str, Any]:
    return memory.model_dump(mode="json")


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def search_hit(hit: ScoredMemory, form: str) -> dict[str, Any]:
    memory = hit.memory
    scores = {"id": memory.id, "score": hit.score, "effective_score": hit.effective_score}
    if form == "index":
        return {**scores, "type": memory.type.value, "preview": truncate(memory.content, PREVIEW_CHARS)}
    if form == "full":
        return {**scores, **full_record(memory), "retrieval_sources": hit.sources}
    return {
        **scores,
        "type": memory.type.value,
        "content": truncate(memory.content, COMPACT_CHARS),
        "source_agent": memory.source_agent,
        "client_id": memory.client_id,
        "importance": memory.importance.value,
        "created_at": full_record(memory)["created_at"],
        **({"key": memory.key} if memory.key else {}),
        **({"subject": memory.subject, "status_value": memory.status_value} if memory.subject else {}),
        **({} if memory.active else {"active": False, "superseded_by": memory.superseded_by}),
    }
