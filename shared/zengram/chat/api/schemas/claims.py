"""Response bodies of the claim routes: field names as the Mnexium SDK's `Claim` and core-mnx's API document them
(both spellings of a claim's value: `value` and `object_value`; `id` and `claim_id`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from zengram.chat.domain.claims import ClaimView, Edge, SlotHistory


class ClaimOut(BaseModel):
    id: str
    claim_id: str
    project_id: str
    subject_id: str
    slot: str
    predicate: str
    value: Any
    object_value: Any
    claim_type: str | None
    confidence: float
    source: str | None
    source_memory_id: str | None
    valid_from: str | None
    valid_until: str | None
    status: str
    superseded_by: str | None
    created_at: str
    updated_at: str
    retracted_at: str | None
    retract_reason: str | None

    @classmethod
    def of(cls, view: ClaimView) -> ClaimOut:
        shown = view.claim.model_dump(mode="json", exclude={"revision"})
        return cls(**shown, claim_id=view.claim.id, object_value=view.claim.value, status=view.status.value,
                   superseded_by=view.superseded_by)


class EdgeOut(BaseModel):
    edge_type: str
    from_claim_id: str
    to_claim_id: str

    @classmethod
    def of(cls, edge: Edge) -> EdgeOut:
        return cls(edge_type=edge.edge_type, from_claim_id=edge.from_claim, to_claim_id=edge.to_claim)


class ClaimCreated(ClaimOut):
    linking_triggered: bool = False  # core-mnx links claims by embedding; this layer does not (docs/chat.md)


class ClaimDetail(BaseModel):
    claim: ClaimOut
    edges: list[EdgeOut]
    supersession_chain: list[EdgeOut]


class SlotOut(BaseModel):
    """A slot's truth: its active claim."""

    subject_id: str
    project_id: str
    slot: str
    active_claim_id: str
    predicate: str
    value: Any
    object_value: Any
    claim_type: str | None
    confidence: float
    source: str | None
    updated_at: str

    @classmethod
    def of(cls, view: ClaimView, *, with_source: bool = True) -> SlotOut:
        claim = ClaimOut.of(view)
        return cls(subject_id=claim.subject_id, project_id=claim.project_id, slot=claim.slot,
                   active_claim_id=claim.id, predicate=claim.predicate, value=claim.value,
                   object_value=claim.value, claim_type=claim.claim_type, confidence=claim.confidence,
                   source=claim.source if with_source else None, updated_at=claim.created_at)


class TruthBody(BaseModel):
    subject_id: str
    project_id: str
    slot_count: int
    slots: list[SlotOut]


class SlotGroups(BaseModel):
    active: list[ClaimOut]
    superseded: list[ClaimOut]
    other: list[ClaimOut]  # retracted, or outside their validity window


class SlotsBody(BaseModel):
    subject_id: str
    total: int
    active_count: int
    slots: SlotGroups

    @classmethod
    def of(cls, subject_id: str, slots: list[SlotHistory]) -> SlotsBody:
        views = [ClaimOut.of(view) for history in slots for view in history.views]
        groups = SlotGroups(active=[v for v in views if v.status == "active"],
                            superseded=[v for v in views if v.status == "superseded"],
                            other=[v for v in views if v.status not in ("active", "superseded")])
        return cls(subject_id=subject_id, total=len(views), active_count=len(groups.active), slots=groups)


class HistoryBody(BaseModel):
    subject_id: str
    project_id: str
    slot_filter: str | None
    by_slot: dict[str, list[ClaimOut]]
    edges: list[EdgeOut]
    total_claims: int
    data: list[ClaimOut]  # every claim, newest first (what the SDK's `claims.history()` returns)


class GraphBody(BaseModel):
    subject_id: str
    claims_count: int
    edges_count: int
    edges_by_type: dict[str, int]
    claims: list[ClaimOut]
    edges: list[EdgeOut]


class RetractedBody(BaseModel):
    success: bool
    claim_id: str
    slot: str
    previous_claim_id: str | None  # the slot's truth afterwards, when the retracted claim was it
    restored_previous: bool
    reason: str


class MemoryClaimsBody(BaseModel):
    data: list[ClaimOut]
    count: int


class ProfileFieldOut(BaseModel):
    field_key: str
    value: Any
    confidence: float
    source: str | None
    claim_id: str
    updated_at: str


class ProfileOut(BaseModel):
    """A subject's profile: the truth of its claim slots (`claims`, as the SDK's `Profile` names it; `data` the
    same map), and each field with where it came from."""

    subject_id: str
    project_id: str
    claims: dict[str, Any]
    data: dict[str, Any]
    fields: list[ProfileFieldOut]

    @classmethod
    def of(cls, project_id: str, subject_id: str, truth: list[ClaimView]) -> ProfileOut:
        fields = [ProfileFieldOut(field_key=view.claim.slot, value=view.claim.value,
                                  confidence=view.claim.confidence, source=view.claim.source, claim_id=view.claim.id,
                                  updated_at=ClaimOut.of(view).created_at) for view in truth]
        values = {field.field_key: field.value for field in fields}
        return cls(subject_id=subject_id, project_id=project_id, claims=values, data=dict(values), fields=fields)


class FieldDeletedBody(BaseModel):
    ok: bool
    deleted: bool
    field_key: str
    retracted_claims: int


class SchemaFieldOut(BaseModel):
    key: str
    type: str
    description: str
    is_system: bool


class ProfileSchemaBody(BaseModel):
    """GET /profiles/schema: the fields every project knows, and the rule a custom field's key keeps."""

    project_id: str
    fields: list[SchemaFieldOut]
    custom_fields: bool  # any other key (a claim slot) is taken
    field_key_pattern: str
