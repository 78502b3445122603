"""The memory record and the values around it."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from zengram.kernel.errors import Conflict, NotFound, StaleRevision
from zengram.kernel.identifiers import GLOBAL_CLIENT as GLOBAL_CLIENT
from zengram.kernel.search import IndexAttributes
from zengram.kernel.timestamps import as_utc as as_utc
from zengram.kernel.timestamps import format_timestamp as format_timestamp
from zengram.kernel.timestamps import parse_timestamp as parse_timestamp
from zengram.kernel.timestamps import shifted as shifted
from zengram.kernel.timestamps import utc_now as utc_now
from zengram.memory.domain.entities import EntityRef


class MemoryType(StrEnum):
    EVENT = "event"
    FACT = "fact"
    DECISION = "decision"
    STATUS = "status"


# Facts and statuses hold from a moment on: their `valid_from` defaults to the time of writing (as upstream).
TIMELY_TYPES = frozenset({MemoryType.FACT, MemoryType.STATUS})


class Category(StrEnum):
    SEMANTIC = "semantic"
    EPISODIC = "episodic"
    PROCEDURAL = "procedural"


class Importance(StrEnum):
    CRITICAL = "critical"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class KnowledgeCategory(StrEnum):
    BRAND = "brand"
    STRATEGY = "strategy"
    MEETING = "meeting"
    CONTENT = "content"
    TECHNICAL = "technical"
    RELATIONSHIP = "relationship"
    GENERAL = "general"


class Memory(BaseModel):
    """One memory as the record store holds it: the source of truth."""

    model_config = ConfigDict(frozen=True)

    id: str
    type: MemoryType
    content: str
    content_hash: str
    source_agent: str
    client_id: str = GLOBAL_CLIENT
    category: Category = Category.EPISODIC
    importance: Importance = Importance.MEDIUM
    knowledge_category: KnowledgeCategory | None = None
    key: str | None = None
    subject: str | None = None
    status_value: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    created_at: datetime
    updated_at: datetime
    active: bool = True
    supersedes: str | None = None
    superseded_by: str | None = None
    superseded_at: datetime | None = None
    deleted_at: datetime | None = None
    deleted_by: str | None = None
    delete_reason: str | None = None
    observed_by: list[str] = Field(default_factory=list)
    observation_count: int = 1
    last_observed_at: datetime | None = None
    access_count: int = 0
    last_accessed_at: datetime | None = None
    confidence: float = 1.0
    consolidated: bool = False
    revision: int = 1
    entities: list[EntityRef] = Field(default_factory=list)  # extracted at write time (domain/entities.py)

    @field_serializer(
        "valid_from", "valid_to", "created_at", "updated_at", "superseded_at", "deleted_at",
        "last_observed_at", "last_accessed_at", when_used="json",
    )
    def _timestamp_text(self, moment: datetime | None) -> str | None:
        return format_timestamp(moment) if moment is not None else None

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None

    @property
    def is_superseded(self) -> bool:
        return self.superseded_by is not None and not self.active

    @property
    def label(self) -> tuple[str, str] | None:
        """The slot only one active memory of a client holds at a time: a fact's ("key", key), a status's
        ("subject", subject). None for other types, and for a fact without key or a status without subject."""
        if self.type is MemoryType.FACT and self.key is not None:
            return "key", self.key
        if self.type is MemoryType.STATUS and self.subject is not None:
            return "subject", self.subject
        return None

    # -- state transitions: each returns the memory as it is to be written (frozen: `self` is never changed) ------
    # The record stores persist what these return and decide nothing themselves (zengram.memory.domain.lifecycle for the
    # transitions that also read other records).

    def revised(self, at: datetime, **changes: Any) -> Memory:
        """`changes` applied. Every change a reader could act on bumps `revision` (the optimistic lock every write
        is conditioned on) and sets `updated_at`; counters (observations, accesses) are not revisions."""
        return self.model_copy(update={**changes, "updated_at": at, "revision": self.revision + 1})

    def observed_by_agent(self, agent: str, at: datetime, max_observers: int) -> Memory | None:
        """Another agent stored the same content: one more observation, the agent named while `observed_by` has
        room (`max_observers`). None when `agent` already stands behind this memory (a plain duplicate)."""
        if agent == self.source_agent or agent in self.observed_by:
            return None
        named = [agent] if len(self.observed_by) < max_observers else []
        return self.model_copy(update={"observed_by": [*self.observed_by, *named],
                                       "observation_count": self.observation_count + 1, "last_observed_at": at})

    def patched(self, changes: MemoryChanges, at: datetime, *, expected_revision: int | None = None) -> Memory:
        """A PATCH applied. A deleted memory cannot change (Conflict); with `expected_revision`, a memory that changed
        since its caller read it is not changed either (StaleRevision)."""
        if self.is_deleted:
            raise Conflict(f"memory {self.id} is deleted; restore is not possible, store a new one")
        if expected_revision is not None and self.revision != expected_revision:
            raise StaleRevision(f"memory {self.id} changed meanwhile (revision {self.revision}, "
                                f"expected {expected_revision})")
        return self.revised(at, **changes.updates())

    def soft_deleted(self, by: str, reason: str | None, at: datetime) -> Memory:
        """Forgotten: inactive, with who deleted it, when and why. Deleting again changes nothing (`self`)."""
        if self.is_deleted:
            return self
        return self.revised(at, active=False, deleted_at=at, deleted_by=by, delete_reason=reason)

    def displaced_by(self, successor_id: str, at: datetime) -> Memory:
        """Superseded by the memory that now holds its key/subject: inactive, no longer valid from `at`."""
        return self.revised(at, active=False, superseded_by=successor_id, superseded_at=at, valid_to=at)

    def reactivated(self, at: datetime) -> Memory:
        """A superseded memory made active again (see `zengram.memory.domain.lifecycle.restore`). A deleted one cannot
        be."""
        if self.is_deleted:
            raise Conflict(f"memory {self.id} is deleted and cannot be restored")
        return self.revised(at, active=True, superseded_by=None, superseded_at=None, valid_to=None)

    def merged_into(self, merged_id: str, at: datetime) -> Memory | None:
        """Consolidation merged this memory into `merged_id`: an active one is superseded by it (giving up its
        content and key/subject slots) and consolidated; an inactive one is only marked consolidated. None when
        nothing changes: deleted, the merged memory itself, or an inactive one already consolidated."""
        if self.is_deleted or self.id == merged_id:
            return None
        if self.active:
            return self.revised(at, active=False, superseded_by=merged_id, superseded_at=at, valid_to=at,
                                consolidated=True)
        return self.marked_consolidated(at)

    def marked_consolidated(self, at: datetime) -> Memory | None:
        """Seen by consolidation. None when deleted or already consolidated."""
        if self.is_deleted or self.consolidated:
            return None
        return self.revised(at, consolidated=True)

    def expired(self, by: str, reason: str, at: datetime) -> Memory | None:
        """Consolidation's expiry of an old event nobody ever read: soft-deleted as `by`, for `reason`. None when
        it no longer qualifies (not an event, accessed, superseded or deleted since it was listed)."""
        if self.type is not MemoryType.EVENT or not self.active or self.access_count != 0 or self.is_deleted:
            return None
        return self.soft_deleted(by, reason, at)

    def index_text(self) -> str:
        """The text the keyword path indexes: content plus the labels a caller may search by."""
        parts = [self.content, self.key, self.subject, self.status_value]
        return "\n".join(part for part in parts if part)

    def valid_at(self, moment: datetime) -> bool:
        """True when the memory held at `moment`: started by then and not yet ended."""
        started = self.valid_from or self.created_at
        return started <= moment and (self.valid_to is None or self.valid_to > moment)


class MemoryNotFound(NotFound):
    def __init__(self, memory_id: str) -> None:
        super().__init__(f"memory {memory_id} not found")


class MemoryChanges(BaseModel):
    """A partial update as PATCH applies it. `None` means "leave as is"."""

    content: str | None = None
    content_hash: str | None = None
    importance: Importance | None = None
    knowledge_category: KnowledgeCategory | None = None
    metadata: dict[str, Any] | None = None
    entities: list[EntityRef] | None = None  # re-extracted with new content, or rewritten by reclassify

    def updates(self) -> dict[str, Any]:
        """The fields to change, as values (not dumped to dicts, so nested models stay models)."""
        return {name: getattr(self, name) for name in type(self).model_fields if getattr(self, name) is not None}

    def changed_fields(self) -> list[str]:
        return [name for name in ("content", "importance", "knowledge_category", "metadata")
                if getattr(self, name) is not None]


class WriteKind(StrEnum):
    CREATED = "created"
    DEDUPLICATED = "deduplicated"
    CORROBORATED = "corroborated"


class WriteOutcome(BaseModel):
    """What `RecordStore.create_or_corroborate` did, atomically."""

    kind: WriteKind
    memory: Memory
    superseded: Memory | None = None


class RecordQuery(BaseModel):
    """Structured lookup over the record store (GET /memory/query and maintenance)."""

    type: MemoryType | None = None
    source_agent: str | None = None
    client_id: str | None = None
    client_ids: tuple[str, ...] | None = None  # a tenant scope: any of these clients (with client_id: both apply)
    category: Category | None = None
    key: str | None = None
    subject: str | None = None
    since: datetime | None = None
    include_inactive: bool = False
    include_deleted: bool = False  # deleted memories too (export); implies nothing about include_inactive
    oldest_first: bool = False  # `created_at` ascending, then id: stable paging while new memories arrive
    limit: int = 50
    offset: int = 0


class ImportKind(StrEnum):
    IMPORTED = "imported"
    DUPLICATE_ID = "duplicate_id"
    DUPLICATE_CONTENT = "duplicate_content"
    LABEL_HELD = "label_held"


class ImportStatus(StrEnum):
    """What became of one record of an import batch."""

    IMPORTED = "imported"
    SKIPPED = "skipped"  # left out: its id, content or key/subject is already taken (`ImportKind`)
    FAILED = "failed"  # invalid, or the record store could not take it


class ImportOutcome(BaseModel):
    """What `RecordStore.import_memory` did: stored it, or left everything as it was because of `existing_id`."""

    kind: ImportKind
    existing_id: str | None = None


def index_attributes(memory: Memory) -> IndexAttributes:
    """The filterable fields the search index keeps of `memory`."""
    return IndexAttributes(
        type=memory.type.value,
        source_agent=memory.source_agent,
        client_id=memory.client_id,
        category=memory.category.value,
        knowledge_category=memory.knowledge_category.value if memory.knowledge_category else None,
        active=memory.active,
        valid_from=memory.valid_from or memory.created_at,
        valid_to=memory.valid_to,
        created_at=memory.created_at,
        entities=tuple(dict.fromkeys(ref.key for ref in memory.entities)),
    )
