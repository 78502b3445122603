"""Subject memories: what the layer remembers about a subject, how a new one is versioned against the old ones,
and how recall ranks them (mnexium-concepts.md "Memory Fields", "Memory Versioning", "Decay & Reinforcement";
semantics.md "Semantic versioning").

A memory's state changes are methods here, so every store applies the same rules and only persists the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from zengram.chat.domain.recall_calibration import calibrated_relevance
from zengram.chat.domain.scopes import project_scope, subject_scope
from zengram.kernel.calibration import IDENTITY, Calibration
from zengram.kernel.errors import Conflict
from zengram.kernel.placeholders import PLACEHOLDER
from zengram.kernel.timestamps import format_timestamp

if TYPE_CHECKING:
    from zengram.kernel.search import IndexAttributes

SECONDS_PER_DAY = 86_400.0
MEMORY_CATEGORY = "subject-memory"  # the `category` of their index documents


class MemoryKind(StrEnum):
    FACT = "fact"
    PREFERENCE = "preference"
    CONTEXT = "context"
    NOTE = "note"


class MemoryStatus(StrEnum):
    ACTIVE = "active"  # recalled
    SUPERSEDED = "superseded"  # replaced by a newer memory: kept for audit, never recalled, restorable


class Visibility(StrEnum):
    PRIVATE = "private"  # its subject only
    SHARED = "shared"  # every subject of the project
    PUBLIC = "public"  # like shared: a project is a tenant here, and nothing crosses tenants (docs/chat.md)


class MemorySource(StrEnum):
    EXPLICIT = "explicit"  # created through the API
    INFERRED = "inferred"  # extracted from a conversation
    CORRECTED = "corrected"  # the user corrected an inference


class SubjectMemory(BaseModel):
    """One memory about a subject, as its store holds it."""

    model_config = ConfigDict(frozen=True, defer_build=True)  # built on first use, not at init (#38)

    id: str
    project_id: str
    subject_id: str
    text: str  # scrubbed of credentials
    text_hash: str  # `content_hash(text)`: the exact-duplicate guard among a subject's active memories
    kind: MemoryKind = MemoryKind.FACT
    importance: int = 50  # 0–100
    visibility: Visibility = Visibility.PRIVATE
    confidence: float = 1.0  # 0–1: how sure the extraction was
    source: MemorySource = MemorySource.EXPLICIT
    is_temporal: bool = False  # time-bound ("travelling next week"): decays faster
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    status: MemoryStatus = MemoryStatus.ACTIVE
    superseded_by: str | None = None
    supersedes: list[str] = Field(default_factory=list)
    seen_count: int = 0  # recalls into a conversation
    last_seen_at: datetime | None = None
    chat_id: str | None = None  # the conversation it was learned from
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None = None
    revision: int = 1

    @field_serializer("created_at", "updated_at", "deleted_at", "last_seen_at", when_used="json")
    def _timestamp_text(self, moment: datetime | None) -> str | None:
        return format_timestamp(moment) if moment is not None else None

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None

    @property
    def is_active(self) -> bool:
        return self.status is MemoryStatus.ACTIVE and not self.is_deleted

    # -- state changes: each returns the memory as it is afterwards (one revision on) --------------------------

    def superseded(self, by: str, at: datetime) -> SubjectMemory:
        if not self.is_active:
            raise Conflict(f"memory {self.id}: only an active memory can be superseded")
        return self._changed(at, status=MemoryStatus.SUPERSEDED, superseded_by=by)

    def restored(self, at: datetime) -> SubjectMemory:
        """Active again (the memory that superseded it stays active too: restoring is an editor's decision)."""
        if self.is_deleted:
            raise Conflict(f"memory {self.id}: it is deleted, and a deleted memory cannot be restored")
        if self.is_active:
            return self
        return self._changed(at, status=MemoryStatus.ACTIVE, superseded_by=None)

    def deleted(self, at: datetime) -> SubjectMemory:
        """Soft-deleted: never recalled, listed or restored again; deleting twice changes nothing."""
        return self if self.is_deleted else self._changed(at, deleted_at=at)

    def patched(self, changes: dict[str, Any], at: datetime) -> SubjectMemory:
        if self.is_deleted:
            raise Conflict(f"memory {self.id}: it is deleted")
        if not changes:
            return self
        return SubjectMemory.model_validate({**self.model_dump(), **changes, "updated_at": at,
                                             "revision": self.revision + 1})

    def _changed(self, at: datetime, **changes: Any) -> SubjectMemory:
        return self.model_copy(update={**changes, "updated_at": at, "revision": self.revision + 1})

    # -- the search index --------------------------------------------------------------------------------------

    @property
    def index_scope(self) -> str:
        if self.visibility is Visibility.PRIVATE:
            return subject_scope(self.project_id, self.subject_id)
        return project_scope(self.project_id)

    def index_text(self) -> str:
        return "\n".join([self.text, *self.tags])

    def index_attributes(self) -> IndexAttributes:
        from zengram.kernel.search import IndexAttributes  # the search models: not at a function's init

        return IndexAttributes(
            type=self.kind.value, source_agent=self.source.value, client_id=self.project_id,
            category=MEMORY_CATEGORY, active=self.is_active, valid_from=self.created_at, created_at=self.created_at,
            scope=self.index_scope,
        )

    def visible_to(self, project_id: str, subject_id: str) -> bool:
        """Whether recall for this subject may see it (the store has the last word over the index)."""
        if self.project_id != project_id or self.is_deleted:
            return False
        return self.visibility is not Visibility.PRIVATE or self.subject_id == subject_id


@dataclass(frozen=True)
class MemoryWrite:
    """What a store's `create` did: `memory` stored (and `superseded` replaced), or nothing because of `duplicate`,
    an active memory of the subject with the same text."""

    memory: SubjectMemory | None
    superseded: list[SubjectMemory] = field(default_factory=list)
    duplicate: SubjectMemory | None = None


# -- semantic versioning (semantics.md) ------------------------------------------------------------------------

@dataclass(frozen=True)
class VersioningPolicy:
    """Similarity = cosine × 100 against the subject's active memories: at or above `skip_at` a new memory is not
    created; same-kind memories from `supersede_from` up to `skip_at` are superseded by it."""

    skip_at: float = 85.0
    supersede_from: float = 60.0


@dataclass(frozen=True)
class Neighbour:
    memory: SubjectMemory
    similarity: float  # 0–100


@dataclass(frozen=True)
class VersioningDecision:
    duplicate_of: Neighbour | None = None  # not created: this one says the same
    supersede: list[Neighbour] = field(default_factory=list)

    @property
    def skipped(self) -> bool:
        return self.duplicate_of is not None


def decide_version(kind: MemoryKind, neighbours: Sequence[Neighbour], policy: VersioningPolicy,
                   text: str | None = None) -> VersioningDecision:
    """Skip, supersede or create, as semantics.md says; only active memories take part. With the new (scrubbed)
    `text`, a neighbour whose redaction placeholders differ is never its duplicate, however similar: the texts
    differ in a secret, and scrubbing never merges distinct texts."""
    active = [n for n in neighbours if n.memory.is_active]
    duplicates = [n for n in active if n.similarity >= policy.skip_at and same_secrets(text, n.memory.text)]
    if duplicates:
        return VersioningDecision(duplicate_of=max(duplicates, key=lambda n: (n.similarity, n.memory.id)))
    conflicting = [n for n in active if n.memory.kind is kind and policy.supersede_from <= n.similarity]
    return VersioningDecision(supersede=sorted(conflicting, key=lambda n: (-n.similarity, n.memory.id)))


def same_secrets(text: str | None, other: str) -> bool:
    """Whether two scrubbed texts hold the same redaction placeholders (each names its secret's digest)."""
    return text is None or sorted(PLACEHOLDER.findall(text)) == sorted(PLACEHOLDER.findall(other))


def similarity_of(cosine: float) -> float:
    """(1 − cosine distance) × 100, within 0–100."""
    return round(min(max(cosine, 0.0), 1.0) * 100.0, 2)


# -- recall ranking ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RecallPolicy:
    """How recall ranks: `relevance × confidence × decay × importance` (docs/chat.md).

    relevance = the cosine calibrated for the embedder, lifted by keyword agreement (BM25 / the search's best BM25;
    `zengram.chat.domain.recall_calibration`); decay = rate^days since the memory was last recalled (else created),
    the faster rate for temporal memories; importance weighs 0.5 (0) to 1.0 (100), as Zengram's importance levels
    do."""

    decay_per_day: float = 0.98
    temporal_decay_per_day: float = 0.90
    calibration: Calibration = IDENTITY


def relevance(cosine: float | None, keyword_share: float, policy: RecallPolicy) -> float:
    return calibrated_relevance(cosine, keyword_share, policy.calibration)


def decay(memory: SubjectMemory, now: datetime, policy: RecallPolicy) -> float:
    """Fades per day since the last recall (a recall resets it), faster for temporal memories."""
    since = memory.last_seen_at or memory.created_at
    days = max((now - since).total_seconds(), 0.0) / SECONDS_PER_DAY
    rate = policy.temporal_decay_per_day if memory.is_temporal else policy.decay_per_day
    return float(rate**days)


def importance_weight(importance: int) -> float:
    return 0.5 + max(0, min(importance, 100)) / 200.0


def recall_score(memory: SubjectMemory, relevance_value: float, now: datetime, policy: RecallPolicy) -> float:
    weight = importance_weight(memory.importance)
    return round(relevance_value * memory.confidence * decay(memory, now, policy) * weight, 4)
