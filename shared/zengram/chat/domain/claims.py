"""Claims: slot-keyed assertions about a subject (`favorite_color = "blue"`), each with a confidence, a source and
an optional validity window (docs/chat.md, "Claims").

A claim, once stored, never changes but to be retracted. What a slot holds is derived from its claims in the order
they were made: the newest claim that is not retracted and is valid now is the slot's *active* one (its truth);
the slot's older claims are *superseded* by the next one after them. So setting a slot supersedes its previous
value and keeps it as history, retracting the active claim restores the one before it, and concurrent writers
never leave a slot with two truths. A claim outside its validity window is *inactive* (kept, not the truth).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from itertools import pairwise
from typing import Annotated, Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints, field_serializer

from zengram.chat.domain.request_values import JsonValue
from zengram.chat.domain.tenancy import SubjectId
from zengram.kernel.errors import InvalidInput
from zengram.kernel.request_fields import NotBoolean
from zengram.kernel.text_rules import NotBlank
from zengram.kernel.timestamps import format_timestamp

SLOT_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.:@+=-]{0,127}$"
Slot = Annotated[str, StringConstraints(pattern=SLOT_PATTERN)]
Label = Annotated[str, StringConstraints(min_length=1, max_length=200), NotBlank()]
ClaimType = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:-]{1,64}$")]
DEFAULT_CONFIDENCE = 1.0  # a claim someone asserts is taken as certain unless it says otherwise
SUPERSEDES = "supersedes"


class ClaimStatus(StrEnum):
    ACTIVE = "active"  # the slot's truth
    SUPERSEDED = "superseded"  # a newer claim of the slot replaced it
    INACTIVE = "inactive"  # outside its validity window now
    RETRACTED = "retracted"


class Claim(BaseModel):
    """A stored claim. `status`, `superseded_by` are not stored: `SlotHistory` derives them."""

    model_config = ConfigDict(frozen=True, defer_build=True)  # built on first use, not at init (#38)

    id: str
    project_id: str
    subject_id: str
    slot: str
    predicate: str
    value: Any
    claim_type: str | None = None
    confidence: float = DEFAULT_CONFIDENCE
    source: str | None = None
    source_memory_id: str | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    created_at: datetime
    updated_at: datetime
    retracted_at: datetime | None = None
    retract_reason: str | None = None
    revision: int = 1

    @field_serializer("created_at", "updated_at", "retracted_at", "valid_from", "valid_until", when_used="json")
    def _timestamp_text(self, moment: datetime | None) -> str | None:
        return format_timestamp(moment) if moment is not None else None

    @property
    def is_retracted(self) -> bool:
        return self.retracted_at is not None

    def is_valid(self, now: datetime) -> bool:
        return ((self.valid_from is None or self.valid_from <= now)
                and (self.valid_until is None or now < self.valid_until))

    def retracted(self, reason: str, at: datetime) -> Claim:
        return self.model_copy(update={"retracted_at": at, "retract_reason": reason, "updated_at": at,
                                       "revision": self.revision + 1})


def made_order(claim: Claim) -> tuple[datetime, str]:
    return claim.created_at, claim.id


@dataclass(frozen=True)
class ClaimView:
    """A claim with what its slot's history says of it now."""

    claim: Claim
    status: ClaimStatus
    superseded_by: str | None = None  # the next claim of its slot, when a newer one replaced it


@dataclass(frozen=True)
class Edge:
    """`from_claim` supersedes `to_claim` (the graph core-mnx documents; only this edge type here)."""

    from_claim: str
    to_claim: str
    edge_type: str = SUPERSEDES


@dataclass(frozen=True)
class SlotHistory:
    """One slot's claims, oldest first, and what each is now."""

    slot: str
    views: tuple[ClaimView, ...]

    @property
    def active(self) -> ClaimView | None:
        return next((view for view in self.views if view.status is ClaimStatus.ACTIVE), None)

    def edges(self) -> list[Edge]:
        return [Edge(view.superseded_by, view.claim.id) for view in self.views if view.superseded_by is not None]


def slot_history(slot: str, claims: Iterable[Claim], now: datetime) -> SlotHistory:
    """Derives the statuses of one slot's claims: the newest retained, valid claim is active; each retained claim
    older than another retained one is superseded by the next one after it."""
    ordered = sorted(claims, key=made_order)
    kept = [claim for claim in ordered if not claim.is_retracted]
    following = {older.id: newer.id for older, newer in pairwise(kept)}
    winner = next((claim.id for claim in reversed(kept) if claim.is_valid(now)), None)
    views = []
    for claim in ordered:
        if claim.is_retracted:
            status = ClaimStatus.RETRACTED
        elif claim.id == winner:
            status = ClaimStatus.ACTIVE
        elif claim.id in following:
            status = ClaimStatus.SUPERSEDED
        else:
            status = ClaimStatus.INACTIVE
        views.append(ClaimView(claim, status, following.get(claim.id) if status is not ClaimStatus.RETRACTED
                               else None))
    return SlotHistory(slot, tuple(views))


def histories(claims: Sequence[Claim], now: datetime) -> list[SlotHistory]:
    """Every slot's history, slots by name."""
    by_slot: dict[str, list[Claim]] = {}
    for claim in claims:
        by_slot.setdefault(claim.slot, []).append(claim)
    return [slot_history(slot, by_slot[slot], now) for slot in sorted(by_slot)]


# -- requests --------------------------------------------------------------------------------------------------

class ClaimCreate(BaseModel):
    """POST /claims. The SDK says it two ways: `claims.create` sends `slot`, `value`, `source`; a subject's
    `claims.set` (and core-mnx) sends `predicate`, `object_value`, `source_type`. Both are taken; the slot is the
    predicate unless named."""

    model_config = ConfigDict(extra="ignore")

    subject_id: SubjectId
    slot: Slot | None = None
    predicate: Slot | None = None
    value: JsonValue = None
    object_value: JsonValue = None
    claim_type: ClaimType | None = None
    confidence: Annotated[float, Field(ge=0, le=1), NotBoolean] | None = None
    source: Label | None = None
    source_type: Label | None = None
    source_memory_id: Annotated[str, StringConstraints(max_length=100)] | None = None
    valid_from: AwareDatetime | None = None
    valid_until: AwareDatetime | None = None

    def checked(self) -> ClaimCreate:
        """Itself, once the fields that depend on each other agree (InvalidInput naming the field, else)."""
        if self.slot is None and self.predicate is None:
            raise InvalidInput("slot", "required (or predicate)")
        if "value" not in self.model_fields_set and "object_value" not in self.model_fields_set:
            raise InvalidInput("value", "required (or object_value)")
        if self.valid_from and self.valid_until and self.valid_until <= self.valid_from:
            raise InvalidInput("valid_until", "must be after valid_from")
        return self

    @property
    def slot_name(self) -> str:
        return self.slot or self.predicate or ""

    @property
    def predicate_name(self) -> str:
        return self.predicate or self.slot or ""

    @property
    def claimed_value(self) -> Any:
        return self.object_value if "object_value" in self.model_fields_set else self.value

    @property
    def source_label(self) -> str | None:
        return self.source or self.source_type


class ClaimRetract(BaseModel):
    model_config = ConfigDict(extra="ignore")

    reason: Label = "manual_retraction"


# -- profiles: a subject's profile fields are claims (docs/chat.md, "Profiles") ---------------------------------

PROFILE_SOURCE = "profile"
LEARNED_SOURCE = "learned"  # claims asserted by learning from what the model named
# The profile schema (GET /profiles/schema): the fields every project knows; any other slot name is a custom field.
PROFILE_SCHEMA = (
    ("name", "string", "What the subject is called"),
    ("email", "string", "The subject's email address"),
    ("timezone", "string", "IANA time zone, e.g. Europe/Lisbon"),
    ("language", "string", "The language the subject prefers"),
    ("location", "string", "Where the subject lives or is based"),
    ("occupation", "string", "What the subject does for a living"),
)
PROFILE_FIELDS = tuple(key for key, _, _ in PROFILE_SCHEMA)
MAX_PROFILE_UPDATES = 100


class ProfileFieldUpdate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    field_key: Slot
    value: JsonValue
    confidence: Annotated[float, Field(ge=0, le=1), NotBoolean] | None = None
    source: Label | None = None


class ProfileUpdate(BaseModel):
    """PATCH /profiles: `{"subject_id", "updates": [{"field_key", "value"}, …]}`, as the SDK sends it."""

    model_config = ConfigDict(extra="ignore")

    subject_id: SubjectId
    updates: Annotated[list[ProfileFieldUpdate], Field(min_length=1, max_length=MAX_PROFILE_UPDATES)]

    def claims(self) -> list[ClaimCreate]:
        return [ClaimCreate(subject_id=self.subject_id, slot=update.field_key, value=update.value,
                            confidence=update.confidence, source=update.source or PROFILE_SOURCE,
                            claim_type=PROFILE_SOURCE) for update in self.updates]
