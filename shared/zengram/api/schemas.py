"""Response bodies, typed so the OpenAPI document states every field a response carries (and the fuzz test holds
the server to it). A field declared `left_out()` is absent from the body while it is None, rather than sent as null;
every other field is always there.

The memory record has three shapes, each built in one place: the whole record (`MemoryRecord`, the stored `Memory`
itself), the compact one (`CompactRecord.of`) and the headline (`HeadlineRecord.of`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from zengram.domain.entities import EntityRecord, EntityType, aliases_of, entity_key
from zengram.domain.jobs import JobStatus, JobTrigger
from zengram.domain.llm import LLMInfo as LLMInfo  # re-exported: the routers take response bodies from here
from zengram.domain.models import ImportStatus, Memory, format_timestamp
from zengram.domain.scoring import ScoredMemory

COMPACT_CHARS = 200
PREVIEW_CHARS = 120
SUMMARY_CHARS = 80


def _is_none(value: object) -> bool:
    return value is None


def left_out() -> Any:
    """The field of a body that is left out while it is None (rather than sent as null)."""
    return Field(default=None, exclude_if=_is_none)


MemoryRecord = Memory  # the whole record, exactly as stored (its JSON is the record's one wire form)


class ErrorBody(BaseModel):
    error: str


class HealthBody(BaseModel):
    status: Literal["ok", "degraded"]
    service: str
    checks: dict[str, Literal["up", "down"]]  # records, search_index, embeddings
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
    message: str
    stored_in: StoredIn
    observed_by: list[str]
    observation_count: int


class CorroboratedBody(BaseModel):
    """POST /memory: another agent stored the same content; its observation is counted (200). Upstream's fields
    (`deduplicated`, `corroborated`, `observed_by_count`) and ours (`observed_by`, `observation_count`)."""

    id: str
    type: str
    content_hash: str
    deduplicated: Literal[True] = True
    corroborated: Literal[True] = True
    observed_by_count: int  # agents named in `observed_by` (capped); `observation_count` counts every observation
    message: str
    stored_in: StoredIn
    observed_by: list[str]
    observation_count: int


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
    """A memory as a headline (briefing `summary`'s top_* lists): its first line, cut to 120 characters."""

    id: str
    headline: str
    source_agent: str
    client_id: str
    importance: str
    created_at: str

    @classmethod
    def of(cls, memory: Memory) -> HeadlineRecord:
        text = memory.content.strip()
        headline = text.splitlines()[0] if text else memory.content
        return cls(id=memory.id, headline=truncate(headline, PREVIEW_CHARS), source_agent=memory.source_agent,
                   client_id=memory.client_id, importance=memory.importance.value,
                   created_at=format_timestamp(memory.created_at))


class BriefingItem(CompactRecord):
    """A memory of a `compact` briefing: the compact record, whether its content was cut, and its confidence."""

    truncated: bool
    confidence: float

    @classmethod
    def of(cls, memory: Memory) -> BriefingItem:
        return cls(**dict(CompactRecord.of(memory)), truncated=len(memory.content) > COMPACT_CHARS,
                   confidence=round(memory.confidence, 3))


class SearchScores(BaseModel):
    id: str
    score: float
    effective_score: float


class IndexSearchHit(BaseModel):
    """A hit of `format=index` (upstream's): the ranking score and a one-line summary to pick from."""

    id: str
    effective_score: float
    type: str
    summary: str  # the first non-empty line, at most 80 characters
    importance: str
    client_id: str
    created_at: str

    @classmethod
    def of(cls, hit: ScoredMemory) -> IndexSearchHit:
        memory = hit.memory
        first_line = next((line.strip() for line in memory.content.splitlines() if line.strip()), "")
        return cls(id=memory.id, effective_score=hit.effective_score, type=memory.type.value,
                   summary=truncate(first_line, SUMMARY_CHARS), importance=memory.importance.value,
                   client_id=memory.client_id, created_at=format_timestamp(memory.created_at))


class CompactSearchHit(CompactRecord, SearchScores):
    """A hit of `format=compact`: scores and the compact record."""


class RecordSearchHit(MemoryRecord, SearchScores):
    """A hit with no (or an unknown) `format`: scores and the whole record, its content also under `text`, the
    field upstream Zengram's clients read."""

    text: str


class FullSearchHit(RecordSearchHit):
    """A hit of `format=full`: the whole record and the paths that found it."""

    retrieval_sources: list[str]


SearchHit = CompactSearchHit | FullSearchHit | RecordSearchHit | IndexSearchHit


def search_hit(hit: ScoredMemory, form: str) -> SearchHit:
    memory, scores = hit.memory, {"id": hit.memory.id, "score": hit.score, "effective_score": hit.effective_score}
    if form == "index":
        return IndexSearchHit.of(hit)
    if form == "compact":
        return CompactSearchHit(**{**dict(CompactRecord.of(memory)), **scores})
    record = {**dict(memory), **scores, "text": memory.content}
    if form == "full":
        return FullSearchHit(**record, retrieval_sources=hit.sources)
    return RecordSearchHit(**record)


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
    expanded_query: str | None = left_out()  # the key terms searched when the query itself found nothing
    count: int
    results: list[SearchHit]
    retry: Literal[True] | None = left_out()  # present when the results are the key-term retry's
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
    deleted_at: str  # when it was deleted (an earlier DELETE's time, for one deleted before)
    deleted_by: str
    reason: str | None = None
    already_inactive: Literal[True] | None = left_out()  # it was deleted or superseded before this call
    message: str | None = left_out()


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
    count: int  # memories of the briefing naming it


class BriefingSummary(BaseModel):
    """Upstream's counts and lists, and ours (`returned`, `has_more`, `by_type`)."""

    total_entries: int  # memories the briefing covers (the agent's own and, compact, low-importance events left out)
    total_in_period: int  # every memory written since `since`
    events: int
    facts_updated: int
    status_changes: int
    decisions: int
    agents_active: list[str]
    clients_mentioned: list[str]  # without `global`
    entities_mentioned: list[MentionBody]  # the 15 named most
    returned: int
    has_more: bool
    by_type: dict[str, int]


class BrainStats(BaseModel):
    total_memories: int
    vectors_count: int | None  # null while the search index cannot be counted


BriefingEntry = BriefingItem | MemoryRecord


def briefing_entry(memory: Memory, form: str) -> BriefingEntry:
    """One memory of a briefing bucket: the whole record (`full`) or compact."""
    return memory if form == "full" else BriefingItem.of(memory)


class BriefingBody(BaseModel):
    """GET /briefing. `compact` and `full` answer the four buckets and `brain_stats`; `summary` the top five
    headlines of each type instead."""

    since: str
    format: str
    requesting_agent: str  # `agent`, or "unknown"
    generated_at: str
    agent: str | None = left_out()
    summary: BriefingSummary
    events: list[BriefingEntry] | None = left_out()
    facts_updated: list[BriefingEntry] | None = left_out()
    status_changes: list[BriefingEntry] | None = left_out()
    decisions: list[BriefingEntry] | None = left_out()
    top_events: list[HeadlineRecord] | None = left_out()
    top_facts: list[HeadlineRecord] | None = left_out()
    top_statuses: list[HeadlineRecord] | None = left_out()
    top_decisions: list[HeadlineRecord] | None = left_out()
    brain_stats: BrainStats | None = left_out()


class ExportFilters(BaseModel):
    client_id: str | None
    type: str | None
    since: str | None
    active_only: bool


class ExportBody(BaseModel):
    """GET /export: a page of whole records, newest first."""

    memories: list[MemoryRecord]
    total: int  # records in this page
    limit: int
    offset: int
    has_more: bool
    exported_at: str
    filters: ExportFilters
    count: int  # = total (our earlier name)


class ImportResultItem(BaseModel):
    index: int
    status: ImportStatus
    id: str | None = left_out()
    reason: str | None = left_out()
    error: str | None = left_out()


class ImportBody(BaseModel):
    imported: int
    skipped: int
    errors: int  # records that failed (upstream's name)
    failed: int  # = errors (our earlier name)
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
    canonical_name: str  # upstream's names
    entity_type: str
    mention_count: int
    name: str  # ours
    type: str


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
    """An entity as upstream's registry rows give it (`id`, `canonical_name`, `entity_type`, …); `name` and
    `type` repeat the name and type as our earlier clients read them. The id is the registry's key."""

    id: str
    canonical_name: str
    entity_type: str
    first_seen: str | None
    last_seen: str | None
    mention_count: int
    aliases: list[str]
    name: str
    type: str

    @classmethod
    def of(cls, entity: EntityRecord, aliases: list[str] | None = None) -> EntityBody:
        return cls(id=entity_key(entity.name), canonical_name=entity.name, entity_type=entity.type.value,
                   first_seen=format_timestamp(entity.first_seen) if entity.first_seen else None,
                   last_seen=format_timestamp(entity.last_seen) if entity.last_seen else None,
                   mention_count=entity.mention_count,
                   aliases=aliases if aliases is not None else aliases_of(entity.name),
                   name=entity.name, type=entity.type.value)


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
    related: list[RelatedEntityBody]


class EntityStatsBody(BaseModel):
    total: int
    by_type: dict[str, int]
    top_mentioned: list[EntityBody]


class MemoryLinkBody(BaseModel):
    memory_id: str
    role: str  # how the memory names the entity: always "mentioned" (extraction records no finer role)
    created_at: str  # when the memory was written


class EntityMemoriesBody(BaseModel):
    """Upstream's `memory_links`, and the linked memories themselves in compact form (`memories`)."""

    entity: str
    entity_type: str
    type: str
    count: int
    memory_links: list[MemoryLinkBody]
    memories: list[CompactRecord]


class ReclassifyItemBody(BaseModel):
    name: str
    old_type: str | None  # null for an entity not found
    new_type: str
    memories_affected: int
    error: str | None = left_out()  # "Entity not found"


class ReclassifyBody(BaseModel):
    """Upstream's `{preview, applied, dry_run}` (a dry run previews and applies nothing; a real run answers what
    it applied), and our details of the run."""

    preview: list[ReclassifyItemBody] | None = left_out()
    applied: list[ReclassifyItemBody] | Literal[False]
    dry_run: bool
    unchanged: list[str]
    not_found: list[str]
    memories_updated: int
    indexed: bool
    event_id: str | None = left_out()


class EntityDeletedBody(BaseModel):
    deleted: Literal[True] = True
    name: str
    type: str
    id: str
    memories_updated: int  # memories that no longer name it


class EntityMergedBody(BaseModel):
    merged: Literal[True] = True
    primary: str
    absorbed: str
    links_moved: int
    alias_created: bool
    memories_updated: int


ENTITY_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ErrorBody, "description": "No such entity"}}


# -- /collections ---------------------------------------------------------------------------------------------


class CollectionBody(BaseModel):
    """A collection as listed: upstream's fields; the default one (`shared_memories`) holds every memory."""

    name: str
    is_default: bool
    description: str | None
    dimensions: int
    created_at: str | None  # null for the default collection, which was never created by a call
    exists_in_store: bool


class CollectionListBody(BaseModel):
    collections: list[CollectionBody]


class CreatedCollectionBody(BaseModel):
    name: str
    dimensions: int
    description: str | None
    created_at: str


class CollectionCountsBody(BaseModel):
    name: str
    points_count: int
    vectors_count: int


class CollectionDeletedBody(BaseModel):
    deleted: Literal[True] = True
    name: str


COLLECTION_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorBody, "description": "No such collection"}}
