"""The SDK's readers of the answers that carry memory records: records stay plain dicts (`hit["content"]`), as the
SDK has always given them, and unknown fields are kept, so a newer server's additions never break a client.
Every other answer is read into the server's own model (`zengram.memory.api.schemas`), which the OpenAPI document
states."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from zengram.memory.api.schemas.memory import StoredIn


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
    observed_by_count: int | None = None
    message: str | None = None
    warning: str | None = None


class SearchBody(BaseModel):
    query: str
    expanded_query: str | None = None  # the key terms searched again when the query found nothing
    count: int
    results: list[dict[str, Any]]
    retry: bool | None = None
    retrieval: dict[str, Any] | None = None


class QueryBody(BaseModel):
    type: str
    count: int
    results: list[dict[str, Any]]


class ExportBody(BaseModel):
    memories: list[dict[str, Any]]
    total: int
    limit: int
    offset: int
    has_more: bool
    exported_at: str
    filters: dict[str, Any]
    count: int


class BriefingSummary(BaseModel):
    model_config = ConfigDict(extra="allow")

    total_entries: int
    total_in_period: int
    events: int
    facts_updated: int
    status_changes: int
    decisions: int
    agents_active: list[str]
    clients_mentioned: list[str]
    entities_mentioned: list[dict[str, Any]]
    returned: int
    has_more: bool
    by_type: dict[str, int]


class BriefingBody(BaseModel):
    """`compact` and `full` carry the four buckets and `brain_stats`; `summary` the top_* headline lists."""

    model_config = ConfigDict(extra="allow")

    since: str
    format: str
    requesting_agent: str
    generated_at: str
    agent: str | None = None
    summary: BriefingSummary
    events: list[dict[str, Any]] = []
    facts_updated: list[dict[str, Any]] = []
    status_changes: list[dict[str, Any]] = []
    decisions: list[dict[str, Any]] = []
    top_events: list[dict[str, Any]] = []
    top_facts: list[dict[str, Any]] = []
    top_statuses: list[dict[str, Any]] = []
    top_decisions: list[dict[str, Any]] = []
    brain_stats: dict[str, Any] | None = None


class EntityMemoriesBody(BaseModel):
    model_config = ConfigDict(extra="allow")

    entity: str
    entity_type: str
    type: str
    count: int
    memory_links: list[dict[str, Any]]
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
