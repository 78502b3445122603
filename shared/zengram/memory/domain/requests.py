"""What callers ask for, validated once here so every entry point (HTTP, import, CLI) applies the
same limits. Field names match the Zengram v4 API."""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StringConstraints,
    WithJsonSchema,
    model_validator,
)

from zengram.kernel.identifiers import CLIENT_PATTERN as CLIENT_PATTERN
from zengram.kernel.identifiers import GLOBAL_CLIENT
from zengram.kernel.identifiers import ClientId as ClientId
from zengram.kernel.request_fields import MAX_CONTENT_CHARS as MAX_CONTENT_CHARS
from zengram.kernel.request_fields import MAX_METADATA_BYTES as MAX_METADATA_BYTES
from zengram.kernel.request_fields import MAX_METADATA_DEPTH as MAX_METADATA_DEPTH
from zengram.kernel.request_fields import MAX_OFFSET as MAX_OFFSET
from zengram.kernel.request_fields import Content as Content
from zengram.kernel.request_fields import Metadata as Metadata
from zengram.kernel.request_fields import NotBoolean
from zengram.kernel.text_rules import NotBlank
from zengram.memory.domain.entities import MAX_ENTITIES_PER_MEMORY, EntityRef
from zengram.memory.domain.models import Category, Importance, KnowledgeCategory, MemoryType, as_utc

MAX_SEARCH_LIMIT = 100
AGENT_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"




AgentName = Annotated[str, StringConstraints(pattern=AGENT_PATTERN)]



# Upstream Zengram refuses text that carries an agent framework's tool-call tags: a model that leaked its own
# call syntax into an argument would otherwise store it as memory (and replay it into later prompts).
_CONTROL_MARKUP = re.compile(r"</?\s*(tool_call|function|arguments?|parameters?|params?|args?)(?![a-z])", re.IGNORECASE)
CONTROL_MARKUP_MESSAGE = "contains tool-call control markup; retry with clean argument text"


def control_markup_in(value: Any) -> bool:
    """Whether `value` (text, or a JSON value holding text in keys or values) carries tool-call tags."""
    if isinstance(value, str):
        return _CONTROL_MARKUP.search(value) is not None
    if isinstance(value, dict):
        return any(control_markup_in(key) or control_markup_in(item) for key, item in value.items())
    if isinstance(value, list):
        return any(control_markup_in(item) for item in value)
    return False


def refuse_control_markup(model: BaseModel, fields: tuple[str, ...]) -> None:
    """Raises the field-naming error for the first of `fields` that carries tool-call markup."""
    for name in fields:
        if control_markup_in(getattr(model, name, None)):
            raise ValueError(f"{name}: {CONTROL_MARKUP_MESSAGE}")


def _iso_8601_text(value: Any) -> Any:
    """Timestamps arrive as ISO 8601 text; pydantic would also take epoch numbers, which Zengram does not."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not _ISO_8601.match(value):
        raise ValueError("must be an ISO 8601 timestamp such as 2026-03-28T00:00:00Z")
    return value


def _true_or_false(value: Any) -> Any:
    """A switch given as text (a query parameter) is `true` or `false`, nothing looser: pydantic alone would take
    `0`, `no`, `off` and `1`, `yes`, `on`."""
    if isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return value == "true"
    raise ValueError("must be true or false")


StrictQueryBool = Annotated[bool, BeforeValidator(_true_or_false)]


def _json_integer(value: Any) -> Any:
    """An integer as JSON Schema counts them, `5` or `5.0`; not `"5"` or `true` (pydantic's lax mode takes both,
    its strict mode refuses `5.0`)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("must be an integer")
    return value


JsonInteger = Annotated[int, BeforeValidator(_json_integer)]


_ISO_8601 = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$")
# The OpenAPI document states the forms `_iso_8601_text` takes, and in words what `as_utc` adds.
TIMESTAMP_SCHEMA: dict[str, Any] = {
    "type": "string", "format": "date-time", "pattern": _ISO_8601.pattern,
    "description": "ISO 8601, e.g. 2026-03-28T00:00:00Z; in UTC between the years 0001 and 9999",
}
Timestamp = Annotated[
    datetime, BeforeValidator(_iso_8601_text), AfterValidator(as_utc), WithJsonSchema(TIMESTAMP_SCHEMA)
]


def _only_for_type(memory_type: MemoryType, *fields: str) -> dict[str, Any]:
    """JSON Schema of `_fields_fit_the_type`'s rule: unless `type` is `memory_type`, these fields are null or absent."""
    return {"if": {"properties": {"type": {"const": memory_type.value}}},
            "else": {"properties": {field: {"type": "null"} for field in fields}}}


_TEXT_FIELDS = ("content", "source_agent", "client_id", "key", "subject", "status_value", "metadata")


class MemoryDraft(BaseModel):
    """Body of POST /memory. Only facts take a `key`; only statuses take a `subject` and `status_value`;
    `valid_to` must be later than `valid_from`."""

    model_config = ConfigDict(extra="ignore", use_enum_values=False, json_schema_extra={"allOf": [
        _only_for_type(MemoryType.FACT, "key"),
        _only_for_type(MemoryType.STATUS, "subject", "status_value"),
    ]})

    type: MemoryType
    content: Content
    source_agent: AgentName
    client_id: ClientId | None = None
    category: Category = Category.EPISODIC
    importance: Importance = Importance.MEDIUM
    knowledge_category: KnowledgeCategory | None = KnowledgeCategory.GENERAL  # upstream's default
    key: Annotated[str, StringConstraints(min_length=1, max_length=128)] | None = None
    subject: Annotated[str, StringConstraints(min_length=1, max_length=256)] | None = None
    status_value: Annotated[str, StringConstraints(max_length=256)] | None = None
    metadata: Metadata = Field(default_factory=dict)
    valid_from: Timestamp | None = None
    valid_to: Timestamp | None = Field(default=None, description="Must be later than valid_from")

    @model_validator(mode="after")
    def _fields_fit_the_type(self) -> Self:
        if self.key is not None and self.type is not MemoryType.FACT:
            raise ValueError("key: only facts take a key")
        if (self.subject is not None or self.status_value is not None) and self.type is not MemoryType.STATUS:
            raise ValueError("subject: only statuses take a subject and status_value")
        if self.valid_from and self.valid_to and self.valid_to <= self.valid_from:
            raise ValueError("valid_to: must be later than valid_from")
        refuse_control_markup(self, _TEXT_FIELDS)
        return self

    @property
    def resolved_client_id(self) -> str:
        return self.client_id or GLOBAL_CLIENT


_PATCH_FIELDS = ("content", "importance", "knowledge_category", "metadata")


class MemoryPatch(BaseModel):
    """Body of PATCH /memory/{id}: at least one field."""

    model_config = ConfigDict(extra="ignore", json_schema_extra={"anyOf": [  # the schema of `_at_least_one_field`
        {"required": [name], "properties": {name: {"not": {"type": "null"}}}} for name in _PATCH_FIELDS
    ]})

    content: Content | None = None
    importance: Importance | None = None
    knowledge_category: KnowledgeCategory | None = None
    metadata: Metadata | None = None

    @model_validator(mode="after")
    def _at_least_one_field(self) -> Self:
        if all(getattr(self, name) is None for name in type(self).model_fields):
            raise ValueError("body: give at least one of content, importance, knowledge_category, metadata")
        refuse_control_markup(self, ("content", "metadata"))
        return self


class SearchFormat(StrEnum):
    DEFAULT = "default"  # the whole record, text under `text` (upstream's shape when `format` is absent)
    COMPACT = "compact"
    FULL = "full"
    INDEX = "index"


def _known_format_or_default(value: Any) -> Any:
    """Upstream answers an unknown `format` with its default shape rather than refusing it."""
    return value if value in tuple(SearchFormat) else SearchFormat.DEFAULT


class SearchRequest(BaseModel):
    """Query of GET /memory/search."""

    q: Annotated[str, StringConstraints(min_length=1, max_length=2_000), NotBlank()]
    type: MemoryType | None = None
    source_agent: AgentName | None = None
    client_id: ClientId | None = None
    category: Category | None = None
    knowledge_category: KnowledgeCategory | None = None
    entity: Annotated[str, StringConstraints(min_length=1, max_length=256)] | None = None
    limit: int = Field(default=10, ge=1, le=MAX_SEARCH_LIMIT)
    format: Annotated[SearchFormat, BeforeValidator(_known_format_or_default)] = Field(
        default=SearchFormat.DEFAULT, description="compact | index | full; absent or any other value: the whole "
                                                  "record with its text under `text`")
    include_superseded: bool = False
    at_time: Timestamp | None = None
    read_only: bool = Field(default=False, description="true: do not count the hits as accesses")
    track_access: bool = Field(default=True, description="false: do not count the hits as accesses")

    @property
    def counts_access(self) -> bool:
        return self.track_access and not self.read_only
    reference_date: Timestamp | None = Field(
        default=None, description="The moment relative time words in q ('yesterday', 'last week', 'in March') "
                                  "mean, and the temporal boost's centre; default: at_time, else now")
    date_from: Timestamp | None = Field(
        default=None, description="Only memories that happened (valid_from, else stored) at or after this")
    date_to: Timestamp | None = Field(
        default=None, description="Only memories that happened (valid_from, else stored) at or before this; "
                                  "must not be before date_from")

    @model_validator(mode="after")
    def _window_is_ordered(self) -> Self:
        if self.date_from is not None and self.date_to is not None and self.date_to < self.date_from:
            raise ValueError("date_to: must not be before date_from")
        return self


class QueryType(StrEnum):
    EVENTS = "events"
    FACTS = "facts"
    DECISIONS = "decisions"
    STATUSES = "statuses"

    @property
    def memory_type(self) -> MemoryType:
        return {
            QueryType.EVENTS: MemoryType.EVENT,
            QueryType.FACTS: MemoryType.FACT,
            QueryType.DECISIONS: MemoryType.DECISION,
            QueryType.STATUSES: MemoryType.STATUS,
        }[self]


def _plural_type(value: Any) -> Any:
    """Upstream also takes a memory type's singular (`fact`, `status`, `event`, `decision`)."""
    return f"{value}s" if value in tuple(MemoryType) else value


class StructuredQuery(BaseModel):
    """Query of GET /memory/query: a database lookup, no ranking. Without `type`, events (as upstream)."""

    type: Annotated[QueryType, BeforeValidator(_plural_type)] = QueryType.EVENTS
    source_agent: AgentName | None = None
    category: Category | None = None
    client_id: ClientId | None = None
    since: Timestamp | None = None
    key: Annotated[str, StringConstraints(min_length=1, max_length=128)] | None = Field(
        default=None, description="Facts only: with any type but type=facts, refused as invalid")
    subject: Annotated[str, StringConstraints(min_length=1, max_length=256)] | None = Field(
        default=None, description="Statuses only: with any type but type=statuses, refused as invalid")
    include_superseded: bool = False
    limit: int = Field(default=50, ge=1, le=500)
    offset: int = Field(default=0, ge=0, le=MAX_OFFSET)

    @model_validator(mode="after")
    def _labels_fit_the_type(self) -> Self:
        if self.key is not None and self.type is not QueryType.FACTS:
            raise ValueError("key: only type=facts can be queried by key")
        if self.subject is not None and self.type is not QueryType.STATUSES:
            raise ValueError("subject: only type=statuses can be queried by subject")
        return self


class DeleteRequest(BaseModel):
    """Optional body of DELETE /memory/{id}."""

    model_config = ConfigDict(extra="ignore")

    reason: Annotated[str, StringConstraints(max_length=1_000)] | None = None
    source_agent: AgentName | None = None


# -- knowledge views: briefing, export, import --------------------------------------------------------------

MAX_BRIEFING_LIMIT = 500
MAX_EXPORT_LIMIT = 5_000
MAX_IMPORT_RECORDS = 500
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"
# Counters and revisions an import may carry: far beyond any real count, and small enough that every store holds
# them (SQLite's integers stop at 2**63) and that adding to them, or summing 500 of them, cannot overflow.
MAX_COUNTER = 1_000_000_000
IMPORT_AGENT = "import"  # the agent of an imported record that names none (upstream's default)


class BriefingFormat(StrEnum):
    COMPACT = "compact"
    SUMMARY = "summary"
    FULL = "full"


class BriefingInclude(StrEnum):
    ALL = "all"


class BriefingRequest(BaseModel):
    """Query of GET /briefing: what changed since `since`, for `agent` (its own entries left out)."""

    since: Timestamp
    agent: AgentName | None = None
    include: BriefingInclude | None = None
    client_id: ClientId | None = None
    format: BriefingFormat = BriefingFormat.COMPACT
    limit: int = Field(default=100, ge=1, le=MAX_BRIEFING_LIMIT)

    @property
    def excluded_agent(self) -> str | None:
        return None if self.include is BriefingInclude.ALL else self.agent


class ExportRequest(BaseModel):
    """Query of GET /export: full records, newest first (as upstream), paged by limit/offset."""

    client_id: ClientId | None = None
    type: MemoryType | None = None
    since: Timestamp | None = None
    active_only: bool = True
    order: Literal["newest", "oldest"] = Field(
        default="newest", description="newest first (upstream's order), or oldest first: stable paging while "
                                      "new memories arrive")
    limit: int = Field(default=1_000, ge=1, le=MAX_EXPORT_LIMIT)
    offset: int = Field(default=0, ge=0, le=MAX_OFFSET)


class ImportRecord(MemoryDraft):
    """One record of POST /export/import: the full shape GET /export produces, validated like POST /memory.

    `content_hash` is ignored (recomputed after scrubbing). Missing fields take the defaults a new memory
    would get; `active` defaults to false for a superseded or deleted record.
    """

    type: MemoryType = MemoryType.EVENT  # upstream's import defaults
    source_agent: AgentName = IMPORT_AGENT
    knowledge_category: KnowledgeCategory | None = None
    id: Annotated[str, StringConstraints(pattern=ID_PATTERN)] | None = None
    created_at: Timestamp | None = None
    updated_at: Timestamp | None = None
    active: StrictBool | None = None
    supersedes: Annotated[str, StringConstraints(pattern=ID_PATTERN)] | None = None
    superseded_by: Annotated[str, StringConstraints(pattern=ID_PATTERN)] | None = None
    superseded_at: Timestamp | None = None
    deleted_at: Timestamp | None = None
    deleted_by: AgentName | None = None
    delete_reason: Annotated[str, StringConstraints(max_length=1_000)] | None = None
    observed_by: Annotated[list[AgentName], Field(max_length=100)] | None = None
    observation_count: int = Field(default=1, ge=1, le=MAX_COUNTER)
    last_observed_at: Timestamp | None = None
    access_count: int = Field(default=0, ge=0, le=MAX_COUNTER)
    last_accessed_at: Timestamp | None = None
    confidence: Annotated[float, NotBoolean] = Field(default=1.0, ge=0, le=1, allow_inf_nan=False)
    consolidated: StrictBool = False
    revision: int = Field(default=1, ge=1, le=MAX_COUNTER)
    entities: Annotated[list[EntityRef], Field(max_length=MAX_ENTITIES_PER_MEMORY)] | None = None

    @model_validator(mode="before")
    @classmethod
    def _upstream_names(cls, data: Any) -> Any:
        """Upstream's records carry the text under `text` (its payload) and the reason as `deletion_reason`."""
        if not isinstance(data, dict):
            return data
        renamed = {"text": "content", "deletion_reason": "delete_reason"}
        return {**{renamed[name]: value for name, value in data.items() if name in renamed
                   and data.get(renamed[name]) is None}, **{name: value for name, value in data.items()
                                                            if name not in renamed}}

    @model_validator(mode="after")
    def _lifecycle_is_consistent(self) -> Self:
        if self.active and (self.deleted_at is not None or self.superseded_by is not None):
            raise ValueError("active: a deleted or superseded memory cannot be active")
        if self.created_at and self.updated_at and self.updated_at < self.created_at:
            raise ValueError("updated_at: must not be earlier than created_at")
        return self

    @property
    def resolved_active(self) -> bool:
        if self.active is not None:
            return self.active
        return self.deleted_at is None and self.superseded_by is None


class ImportRequest(BaseModel):
    """Body of POST /export/import. Records are validated one by one, so one bad record fails alone."""

    model_config = ConfigDict(extra="ignore")

    operator_approved: StrictBool = False  # the gate of a destructive restore: JSON true, not "yes" or 1
    data: Annotated[list[Any], Field(max_length=MAX_IMPORT_RECORDS)]
