"""Response bodies, typed so the OpenAPI document (and the SDK) knows their shape."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from zengram.domain.llm import LLMInfo as LLMInfo  # re-exported: the routers take response bodies from here
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
    403: {"model": ErrorBody, "description": "The API key's role or clients do not allow this (docs/keys.md)"},
    429: {"model": ErrorBody, "description": "Rate limited per API key; the Retry-After header says when to retry"},
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
    403: {"model": ErrorBody, "description": "Import without operator_approved=true, or of a record of a client "
                                             "the API key may not access"}
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


class ResearchQueryTrace(BaseModel):
    query: str
    retrieved: int
    cumulative: int


class ResearchSufficiency(BaseModel):
    status: str
    reason: str
    missing: list[str]


class ResearchLLM(LLMInfo):
    pass  # LLMInfo under the name the OpenAPI document (and so the SDK) has always given /research's `llm`


class ResearchBody(BaseModel):
    """POST /research (zengram-api.md "Research")."""

    topic: str
    answer: str
    key_findings: list[str]
    unresolved: list[str]
    cited_memory_ids: list[str]
    partial: bool
    iterations: int
    memories_analyzed: int
    query_trace: list[ResearchQueryTrace]
    sufficiency: ResearchSufficiency
    llm: ResearchLLM


RESEARCH_ERRORS: dict[int | str, dict[str, Any]] = {
    502: {"model": ErrorBody, "description": "The LLM answered with something that is not the expected JSON"},
    503: {"model": ErrorBody, "description": "Research disabled (RESEARCH_ENABLED unset) or LLM unavailable"},
}


class ClientBody(BaseModel):
    """One client fingerprint (PUT/GET /clients/{client_id})."""

    client_id: str
    name: str | None
    aliases: list[str]
    people: list[str]
    domains: list[str]
    keywords: list[str]
    created_at: str
    updated_at: str
    revision: int


class ClientListBody(BaseModel):
    count: int
    clients: list[ClientBody]


class ClientDeletedBody(BaseModel):
    client_id: str
    deleted: bool


CLIENT_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ErrorBody, "description": "No such client"}}


# -- /admin/keys -----------------------------------------------------------------------------------------


class ApiKeyBody(BaseModel):
    """A scoped API key as listed: never the key itself."""

    id: str
    name: str
    role: str
    clients: list[str] | Literal["all"]
    created_at: str
    revoked_at: str | None = None


class CreatedKeyBody(ApiKeyBody):
    key: str  # shown here once; the server keeps only a salted hash


class ApiKeyListBody(BaseModel):
    count: int
    keys: list[ApiKeyBody]


class RevokedKeyBody(BaseModel):
    id: str
    revoked: bool
    revoked_at: str


KEY_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ErrorBody, "description": "No such API key"}}


# -- GET /stats ------------------------------------------------------------------------------------------


class DecayConfig(BaseModel):
    factor: float
    affected_types: list[str]


class StatsEntity(BaseModel):
    name: str
    type: str
    mention_count: int


class StatsEntities(BaseModel):
    total: int
    by_type: dict[str, int]
    top_mentioned: list[StatsEntity]


class StatsRetrieval(BaseModel):
    multi_path: bool
    keyword_search: bool
    keyword_index_count: int | None = None  # absent while the search index cannot be counted


class ParkedRecordBody(BaseModel):
    id: str
    revision: int
    attempts: int  # failed repair attempts at this revision
    last_error: str
    parked_at: str


class IndexHealth(BaseModel):
    """The search index and the queue of changes waiting for it (the record store keeps that queue)."""

    status: str  # ok | degraded (records parked: search misses them) | unavailable (writes are stored and wait)
    error: str | None = None  # why the index is unavailable
    pending_index: int  # memories whose last change has not reached the index yet (the repair sweep's queue)
    parked: int  # memories the sweep gave up on after repeated failures (retry: `zengram repair --retry-parked`)
    parked_records: list[ParkedRecordBody]  # the oldest parked ones (at most 10), with their last error


class StatsBody(BaseModel):
    total_memories: int
    vectors_count: int | None = None  # absent while the search index cannot be counted (index_health says why)
    active: int
    superseded: int
    deleted: int
    consolidated: int
    by_type: dict[str, int]
    decayed_below_50pct: int
    decay_config: DecayConfig
    entities: StatsEntities | None = None  # absent where no entity registry is wired
    retrieval: StatsRetrieval
    index_health: IndexHealth


# -- consolidation --------------------------------------------------------------------------------------------


class ConsolidationStarted(BaseModel):
    status: str = "started"
    job_id: str


class JobBody(BaseModel):
    job_id: str
    status: str  # queued | running | succeeded | failed
    trigger: str  # api | schedule
    created_at: str
    started_at: str | None = None
    finished_at: str | None = None
    result: dict[str, Any]  # counts: memories_considered, batches, merged, superseded, expired, ...
    error: str | None = None


class ConsolidationStatusBody(BaseModel):
    is_running: bool
    last_run_at: str | None
    llm: LLMInfo
    enabled: bool
    interval: str
    last_job_id: str | None = None  # the run that finished last (GET /consolidate/job/{id}, admin only)


# -- entities -------------------------------------------------------------------------------------------------


class EntityBody(BaseModel):
    name: str
    type: str
    mention_count: int
    first_seen: str | None = None
    last_seen: str | None = None


class EntityListBody(BaseModel):
    count: int
    offset: int
    limit: int
    type: str | None = None
    entities: list[EntityBody]


class RelatedEntityBody(BaseModel):
    name: str
    strength: int


class EntityDetailBody(EntityBody):
    aliases: list[str]
    related: list[RelatedEntityBody]


class EntityStatsBody(BaseModel):
    total: int
    by_type: dict[str, int]
    top_mentioned: list[EntityBody]


class EntityMemoriesBody(BaseModel):
    entity: str
    type: str
    count: int
    memories: list[dict[str, Any]]


class ReclassifyChangeBody(BaseModel):
    entity: str
    old_type: str
    new_type: str
    memories_affected: int


class ReclassifyBody(BaseModel):
    dry_run: bool
    changes: list[ReclassifyChangeBody]
    unchanged: list[str]
    not_found: list[str]
    memories_updated: int
    indexed: bool
    event_id: str | None = None


ENTITY_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ErrorBody, "description": "No such entity"}}


# -- GET /memory/{id}/history ---------------------------------------------------------------------------------


class ChainLinkBody(BaseModel):
    """One version in a supersede chain."""

    id: str
    content: str  # the first COMPACT_CHARS characters
    source_agent: str
    active: bool
    created_at: str
    supersedes: str | None = None
    superseded_by: str | None = None
    superseded_at: str | None = None
    deleted_at: str | None = None


class CorroborationBody(BaseModel):
    source_agent: str
    observed_by: list[str]
    observation_count: int
    last_observed_at: str | None = None


class AccessBody(BaseModel):
    access_count: int
    last_accessed_at: str | None = None


class ConfidencePointBody(BaseModel):
    at: str
    confidence: float
    projected: bool


class DecayBody(BaseModel):
    decays: bool  # facts and statuses fade while unused; events and decisions keep their confidence
    factor: float  # per day since the last access
    confidence: float  # as stored
    effective_confidence: float  # now, as search weighs it
    curve: list[ConfidencePointBody]  # creation → 30 days ahead; points after now are `projected`


class HistoryEventBody(BaseModel):
    at: str
    kind: str  # created | corroborated | accessed | superseded | deleted
    memory_id: str
    detail: str


class MemoryHistoryBody(BaseModel):
    id: str
    memory: dict[str, Any]  # the whole record, as GET /memory/{id}
    chain: list[ChainLinkBody]  # oldest first, this memory included
    corroboration: CorroborationBody
    access: AccessBody
    decay: DecayBody
    events: list[HistoryEventBody]  # every version's, in time order


# -- GET /entities/graph --------------------------------------------------------------------------------------


class GraphNodeBody(BaseModel):
    """An entity as a node; upstream's field names (`canonical_name`, `entity_type`)."""

    id: str  # the entity's key: its canonical name, trimmed and case-folded
    canonical_name: str  # what /entities/{name} and /entities/{name}/memories take
    entity_type: str
    mention_count: int
    first_seen: str | None = None
    last_seen: str | None = None


class GraphEdgeBody(BaseModel):
    source: str  # node ids; the edge has no direction (`source` sorts first)
    target: str
    strength: int  # memories that mention both


class EntityGraphBody(BaseModel):
    node_count: int
    edge_count: int
    limit: int
    min_strength: int
    type: str | None = None
    nodes: list[GraphNodeBody]  # most mentioned first
    edges: list[GraphEdgeBody]  # strongest first
