"""The SDK's readers of the answers that carry memory records: records stay plain dicts (`hit["content"]`), as the
SDK has always given them, and unknown fields are kept, so a newer server's additions never break a client.
Every other answer is read into the server's own model (`zengram.api.schemas`), which the OpenAPI document states."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from zengram.api.schemas import StoredIn


class StoreBody(BaseModel):
    """Every field a POST /memory answer can carry; which ones appear depends on the outcome (stored: 201,
    deduplicated or corroborated: 200; see the server's StoredBody, DeduplicatedBody, CorroboratedBody)."""

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


class ExportBody(BaseModel):
    exported_at: str
    count: int
    offset: int
    limit: int
    has_more: bool
    data: list[dict[str, Any]]


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


class EntityMemoriesBody(BaseModel):
    entity: str
    type: str
    count: int
    memories: list[dict[str, Any]]


class JobBody(BaseModel):
    job_id: str
    status: str  # queued | running | succeeded | failed
    trigger: str  # api | schedule
    created_at: str
    started_at: str | None = None
    finished_at: str | None = None
    result: dict[str, Any]  # counts: memories_considered, batches, merged, superseded, expired, ...
    error: str | None = None
