"""Response bodies, typed so the OpenAPI document states every field a response carries (and the fuzz test holds
the server to it). A field declared `left_out()` is absent from the body while it is None, rather than sent as null;
every other field is always there.

The memory record has three shapes, each built in one place: the whole record (`MemoryRecord`, the stored `Memory`
itself), the compact one (`CompactRecord.of`) and the headline (`HeadlineRecord.of`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from zengram.domain.entities import EntityType
from zengram.domain.jobs import JobStatus, JobTrigger
from zengram.domain.llm import LLMInfo as LLMInfo  # re-exported: the routers take response bodies from here
from zengram.domain.models import ImportStatus, Memory, format_timestamp
from zengram.domain.scoring import ScoredMemory

COMPACT_CHARS = 200
PREVIEW_CHARS = 120


def _is_none(value: object) -> bool:
    return value is None


def left_out() -> Any:
    """The field of a body that is left out while it is None (rather than sent as null)."""
    return Field(default=None, exclude_if=_is_none)


MemoryRecord = Memory  # the whole record, exactly as stored (its JSON is the record's one wire form)


class ErrorBody(BaseModel):
    error: str


class HealthBody(BaseModel):
    status: str
    service: str
    timestamp: str


class StoredIn(BaseModel):
    vector: bool
    structured_db: bool


class StoredBody(BaseModel):
    """POST /memory stored a new memory (201)."""

    id: str
    type: str
    content_hash: str
    deduplicated: Literal[False] = False
    supersedes: str | None
    stored_in: StoredIn
    warning: str | None = left_out()


class DeduplicatedBody(BaseModel):
    """POST /memory: the same agent stored the same content before; nothing changed (200)."""

    id: str
    type: str
    content_hash: str
    deduplicated: Literal[True] = True
    observed_by: list[str]
    observation_count: int
    message: str


class CorroboratedBody(BaseModel):
    """POST /memory: another agent stored the same content; its observation is counted (200)."""

    id: str
    type: str
    content_hash: str
    deduplicated: Literal[False] = False
    corroborated: Literal[True] = True
    observed_by: list[str]
    observation_count: int
    message: str


StoreOutcomeBody = StoredBody | DeduplicatedBody | CorroboratedBody
ExistingMemoryBody = DeduplicatedBody | CorroboratedBody


class CompactRecord(BaseModel):
    """A memory in brief (search `compact`, briefing `compact`, an entity's memories): content cut to 200 characters;
    a fact's key, a status's subject and value, and an inactive memory's state only where they apply."""

    id: str
    type: str
    content: str
    source_agent: str
    client_id: str
    importance: str
    created_at: str
    key: str | None = left_out()
    subject: str | None = left_out()
    status_value: str | None = left_out()  # a status's, with its subject
    active: Literal[False] | None = left_out()  # only on an inactive (superseded) memory
    superseded_by: str | None = left_out()

    @classmethod
    def of(cls, memory: Memory) -> CompactRecord:
        return cls(
            id=memory.id, type=memory.type.value, content=truncate(memory.content, COMPACT_CHARS),
            source_agent=memory.source_agent, client_id=memory.client_id, importance=memory.importance.value,
            created_at=format_timestamp(memory.created_at), key=memory.key, subject=memory.subject,
            status_value=memory.status_value if memory.subject is not None else None,
            active=None if memory.active else False, superseded_by=None if memory.active else memory.superseded_by,
        )


class HeadlineRecord(BaseModel):
    """A memory as a headline (briefing `summary`): its first line, cut to 120 characters."""

    id: str
    headline: str
    importance: str
    created_at: str

    @classmethod
    def of(cls, memory: Memory) -> HeadlineRecord:
        text = memory.content.strip()
        headline = text.splitlines()[0] if text else memory.content
        return cls(id=memory.id, headline=truncate(headline, PREVIEW_CHARS), importance=memory.importance.value,
                   created_at=format_timestamp(memory.created_at))


class SearchScores(BaseModel):
    id: str
    score: float
    effective_score: float


class PreviewSearchHit(SearchScores):
    """A hit of `format=index`: scores, type and the first 120 characters."""

    type: str
    preview: str


class CompactSearchHit(CompactRecord, SearchScores):
    """A hit of `format=compact` (the default): scores and the compact record."""


class FullSearchHit(MemoryRecord, SearchScores):
    """A hit of `format=full`: scores, the whole record, and the paths that found it."""

    retrieval_sources: list[str]


SearchHit = CompactSearchHit | FullSearchHit | PreviewSearchHit


def search_hit(hit: ScoredMemory, form: str) -> SearchHit:
    memory, scores = hit.memory, {"id": hit.memory.id, "score": hit.score, "effective_score": hit.effective_score}
    if form == "index":
        return PreviewSearchHit(**scores, type=memory.type.value, preview=truncate(memory.content, PREVIEW_CHARS))
    if form == "full":
        return FullSearchHit(**{**dict(memory), **scores}, retrieval_sources=hit.sources)
    return CompactSearchHit(**{**dict(CompactRecord.of(memory)), **scores})


class TemporalBody(BaseModel):
    """What the temporal resolver found in the query (upstream Zengram's camelCase object), and whether the
    temporal boost applied."""

    # upstream's field names
    dateFrom: str | None
    dateTo: str | None
    isTemporalQuery: bool
    temporalPattern: str | None
    orderDirection: Literal["asc", "desc"] | None = left_out()
    boost: bool


class DateWindowBody(BaseModel):
    """The date window every path applied (explicit date_from/date_to, else the resolver's)."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    from_: str | None = Field(alias="from")
    to: str | None


class RetrievalBody(BaseModel):
    """How a search ran: its paths and their hit counts, the retrieval extras applied (docs/retrieval-extras.md);
    `degraded` and why when some path could not answer."""

    multi_path: bool
    paths: dict[str, int]
    reranked: bool | None = left_out()  # whether the re-ranker re-scored the hits; absent: none configured
    query_domain: str | None = left_out()  # the topic query expansion found
    expanded_query: str | None = left_out()  # the text the vector path embedded, when expanded
    temporal: TemporalBody | None = left_out()  # for a temporal query, when the resolver or the boost is on
    date_window: DateWindowBody | None = left_out()
    degraded: bool | None = left_out()
    reason: str | None = left_out()
    failed_paths: list[str] | None = left_out()


class SearchBody(BaseModel):
    query: str
    count: int
    results: list[SearchHit]
    retrieval: RetrievalBody | None = left_out()


class QueryBody(BaseModel):
    type: str
    count: int
    results: list[MemoryRecord]


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


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


class MentionBody(BaseModel):
    name: str
    type: EntityType
    mentions: int


class BriefingSummary(BaseModel):
    total: int
    returned: int
    has_more: bool
    by_type: dict[str, int]
    active_agents: list[str]
    mentioned_clients: list[str]
    top_entities: list[MentionBody]


BriefingEntry = CompactRecord | HeadlineRecord | MemoryRecord


def briefing_entry(memory: Memory, form: str) -> BriefingEntry:
    """One memory of a briefing bucket: the whole record (`full`), a headline (`summary`) or compact."""
    if form == "full":
        return memory
    if form == "summary":
        return HeadlineRecord.of(memory)
    return CompactRecord.of(memory)


class BriefingBody(BaseModel):
    since: str
    agent: str | None = left_out()
    format: str
    summary: BriefingSummary
    events: list[BriefingEntry]
    facts_updated: list[BriefingEntry]
    status_changes: list[BriefingEntry]
    decisions: list[BriefingEntry]


class ExportBody(BaseModel):
    exported_at: str
    count: int
    offset: int
    limit: int
    has_more: bool
    data: list[MemoryRecord]


class ImportResultItem(BaseModel):
    index: int
    status: ImportStatus
    id: str | None = left_out()
    reason: str | None = left_out()
    error: str | None = left_out()


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
    keyword_index_count: int | None = left_out()  # absent while the search index cannot be counted


class ParkedRecordBody(BaseModel):
    id: str
    revision: int
    attempts: int  # failed repair attempts at this revision
    last_error: str
    parked_at: str


class IndexHealth(BaseModel):
    """The search index and the queue of changes waiting for it (the record store keeps that queue)."""

    status: str  # ok | degraded (records parked: search misses them) | unavailable (writes are stored and wait)
    error: str | None = left_out()  # why the index is unavailable
    pending_index: int  # memories whose last change has not reached the index yet (the repair sweep's queue)
    parked: int  # memories the sweep gave up on after repeated failures (retry: `zengram repair --retry-parked`)
    parked_records: list[ParkedRecordBody]  # the oldest parked ones (at most 10), with their last error


class StatsBody(BaseModel):
    total_memories: int
    vectors_count: int | None = left_out()  # absent while the index cannot be counted (see index_health)
    active: int
    superseded: int
    deleted: int
    consolidated: int
    by_type: dict[str, int]
    decayed_below_50pct: int
    decay_config: DecayConfig
    entities: StatsEntities | None = left_out()  # absent where no entity registry is wired
    retrieval: StatsRetrieval
    index_health: IndexHealth


# -- consolidation --------------------------------------------------------------------------------------------


class ConsolidationStarted(BaseModel):
    status: Literal["started"] = "started"
    job_id: str


class ConsolidationResult(BaseModel):
    """What a run did (`zengram.services.consolidation.RunSummary`); empty until the job finishes."""

    memories_considered: int | None = left_out()
    batches: int | None = left_out()
    clients: list[str] | None = left_out()
    merged: int | None = left_out()
    superseded: int | None = left_out()
    skipped_duplicates: int | None = left_out()
    contradictions: int | None = left_out()
    connections: int | None = left_out()
    summaries: int | None = left_out()
    categorized: int | None = left_out()
    consolidated: int | None = left_out()
    expired: int | None = left_out()


class JobBody(BaseModel):
    job_id: str
    status: JobStatus
    trigger: JobTrigger
    created_at: str
    started_at: str | None = None
    finished_at: str | None = None
    result: ConsolidationResult
    error: str | None = None


class ConsolidationStatusBody(BaseModel):
    is_running: bool
    last_run_at: str | None
    llm: LLMInfo
    enabled: bool
    interval: str


# -- entities -------------------------------------------------------------------------------------------------


class EntityBody(BaseModel):
    name: str
    type: str
    mention_count: int
    first_seen: str | None = left_out()
    last_seen: str | None = left_out()


class EntityListBody(BaseModel):
    count: int
    offset: int
    limit: int
    type: str | None = left_out()
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
    memories: list[CompactRecord]


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
    event_id: str | None = left_out()


ENTITY_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ErrorBody, "description": "No such entity"}}
