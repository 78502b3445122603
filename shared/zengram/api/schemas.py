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


class BriefingSummary(BaseModel):
    total: int
    returned: int
    has_more: bool
    by_type: dict[str, int]
    active_agents: list[str]
    mentioned_clients: list[str]
    top_entities: list[dict[str, Any]]


class BriefingBody(BaseModel):
    since: str
    agent: str | None = None
    format: str
    summary: BriefingSummary
    events: list[dict[str, Any]]
    facts_updated: list[dict[str, Any]]
    status_changes: list[dict[str, Any]]
    decisions: list[dict[str, Any]]


class ExportBody(BaseModel):
    exported_at: str
    count: int
    offset: int
    limit: int
    has_more: bool
    data: list[dict[str, Any]]


class ImportResultItem(BaseModel):
    index: int
    status: str
    id: str | None = None
    reason: str | None = None
    error: str | None = None


class ImportBody(BaseModel):
    imported: int
    skipped: int
    failed: int
    indexed: bool
    results: list[ImportResultItem]


FORBIDDEN: dict[int | str, dict[str, Any]] = {
    403: {"model": ErrorBody, "description": "Import without operator_approved=true"}
}


def briefing_entry(memory: Memory, form: str) -> dict[str, Any]:
    """One memory of a briefing bucket: the whole record (`full`), a headline (`summary`) or compact."""
    if form == "full":
        return full_record(memory)
    created_at = full_record(memory)["created_at"]
    if form == "summary":
        headline = memory.content.strip().splitlines()[0] if memory.content.strip() else memory.content
        return {"id": memory.id, "headline": truncate(headline, PREVIEW_CHARS),
                "importance": memory.importance.value, "created_at": created_at}
    return {
        "id": memory.id,
        "type": memory.type.value,
        "content": truncate(memory.content, COMPACT_CHARS),
        "source_agent": memory.source_agent,
        "client_id": memory.client_id,
        "importance": memory.importance.value,
        "created_at": created_at,
        **({"key": memory.key} if memory.key else {}),
        **({"subject": memory.subject, "status_value": memory.status_value} if memory.subject else {}),
    }
