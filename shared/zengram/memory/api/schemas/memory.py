"""The memory endpoints' bodies: store outcomes, search hits and retrieval details, query, update, delete,
restore and a memory's history."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from zengram.kernel.timestamps import format_timestamp
from zengram.memory.api.schemas import SUMMARY_CHARS, truncate
from zengram.memory.api.schemas.records import CompactRecord, MemoryRecord
from zengram.memory.domain.scoring import ScoredMemory
from zengram.web.schemas import left_out


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
    memory: MemoryRecord  # the whole record, as GET /memory/{id}
    chain: list[ChainLinkBody]  # oldest first, this memory included
    corroboration: CorroborationBody
    access: AccessBody
    decay: DecayBody
    events: list[HistoryEventBody]  # every version's, in time order
