"""Claims: `/claims` as the Mnexium SDK calls it (and core-mnx documents it), and a memory's claims."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Path, Query

from zengram.chat.api.deps import ChatDep, ProjectDep
from zengram.chat.api.schemas import CHAT_ERRORS
from zengram.chat.api.schemas.claims import (
    ClaimCreated,
    ClaimDetail,
    ClaimOut,
    EdgeOut,
    GraphBody,
    HistoryBody,
    MemoryClaimsBody,
    RetractedBody,
    SlotOut,
    SlotsBody,
    TruthBody,
)
from zengram.chat.domain.claims import SLOT_PATTERN, ClaimCreate, ClaimRetract, Edge, SlotHistory
from zengram.chat.domain.tenancy import NAME_PATTERN

router = APIRouter(prefix="/api/v1", tags=["chat: claims"], responses=CHAT_ERRORS)
ClaimId = Annotated[str, Path(min_length=1, max_length=100)]
SubjectPath = Annotated[str, Path(pattern=NAME_PATTERN)]
SlotPath = Annotated[str, Path(pattern=SLOT_PATTERN)]


GraphLimit = Annotated[int, Query(ge=1, le=200, description="At most this many claims, newest first (core-mnx)")]
ListLimit = Annotated[int, Query(ge=1, le=500, description="At most this many claims, newest first (core-mnx)")]


def _edges(edges: list[Edge]) -> list[EdgeOut]:
    return [EdgeOut.of(edge) for edge in edges]


def _newest(slots: list[SlotHistory], limit: int) -> list[SlotHistory]:
    """The slots' histories cut to the `limit` newest claims of them all (core-mnx's `limit`)."""
    views = sorted((view for history in slots for view in history.views),
                   key=lambda view: (view.claim.created_at, view.claim.id), reverse=True)[:limit]
    kept = {view.claim.id for view in views}
    cut = [SlotHistory(h.slot, tuple(v for v in h.views if v.claim.id in kept)) for h in slots]
    return [history for history in cut if history.views]


@router.post("/claims", status_code=201, response_model=ClaimCreated)
def create_claim(body: ClaimCreate, chat: ChatDep, project: ProjectDep) -> ClaimCreated:
    """Asserts a claim: it becomes its slot's truth, and the slot's previous claim is superseded (kept)."""
    claim, history = chat.claims.create(project, body)
    view = next(view for view in history.views if view.claim.id == claim.id)
    return ClaimCreated(**ClaimOut.of(view).model_dump())


@router.get("/claims/{claim_id}", response_model=ClaimDetail)
def get_claim(claim_id: ClaimId, chat: ChatDep, project: ProjectDep) -> ClaimDetail:
    view, history = chat.claims.get(project, claim_id)
    mine = [edge for edge in history.edges() if claim_id in (edge.from_claim, edge.to_claim)]
    return ClaimDetail(claim=ClaimOut.of(view), edges=_edges(mine), supersession_chain=_edges(history.edges()))


@router.post("/claims/{claim_id}/retract", response_model=RetractedBody)
def retract_claim(claim_id: ClaimId, chat: ChatDep, project: ProjectDep,
                  body: Annotated[ClaimRetract | None, Body()] = None) -> RetractedBody:
    """Retracts a claim, keeping its record; when it was its slot's truth, the previous claim is again."""
    reason = (body or ClaimRetract()).reason
    claim, active, restored = chat.claims.retract(project, claim_id, reason)
    return RetractedBody(success=True, claim_id=claim.id, slot=claim.slot,
                         previous_claim_id=active.claim.id if restored and active else None,
                         restored_previous=restored, reason=claim.retract_reason or reason)


@router.get("/claims/subject/{subject_id}/truth", response_model=TruthBody)
def subject_truth(subject_id: SubjectPath, chat: ChatDep, project: ProjectDep,
                  include_source: bool = True) -> TruthBody:
    """The current value of every slot of the subject."""
    slots = [SlotOut.of(view, with_source=include_source) for view in chat.claims.truth(project, subject_id)]
    return TruthBody(subject_id=subject_id, project_id=project, slot_count=len(slots), slots=slots)


@router.get("/claims/subject/{subject_id}/slot/{slot}", response_model=SlotOut)
def subject_slot(subject_id: SubjectPath, slot: SlotPath, chat: ChatDep, project: ProjectDep) -> SlotOut:
    return SlotOut.of(chat.claims.active(project, subject_id, slot))


@router.get("/claims/subject/{subject_id}/slots", response_model=SlotsBody)
def subject_slots(subject_id: SubjectPath, chat: ChatDep, project: ProjectDep, limit: ListLimit = 100) -> SlotsBody:
    """The subject's claims (the `limit` newest), grouped: each slot's active one, the superseded ones, the rest."""
    return SlotsBody.of(subject_id, _newest(chat.claims.histories(project, subject_id), limit))


@router.get("/claims/subject/{subject_id}/history", response_model=HistoryBody)
def subject_history(subject_id: SubjectPath, chat: ChatDep, project: ProjectDep,
                    slot: Annotated[str | None, Query(pattern=SLOT_PATTERN)] = None,
                    limit: ListLimit = 100) -> HistoryBody:
    """The subject's claims (or one slot's; the `limit` newest), with the supersession edges between them."""
    slots = _newest([h for h in chat.claims.histories(project, subject_id) if slot is None or h.slot == slot], limit)
    by_slot = {h.slot: [ClaimOut.of(view) for view in h.views] for h in slots}
    claims = sorted((claim for listed in by_slot.values() for claim in listed),
                    key=lambda claim: (claim.created_at, claim.id), reverse=True)
    return HistoryBody(subject_id=subject_id, project_id=project, slot_filter=slot, by_slot=by_slot,
                       edges=_edges([edge for h in slots for edge in h.edges()]), total_claims=len(claims),
                       data=claims)


@router.get("/claims/subject/{subject_id}/graph", response_model=GraphBody)
def subject_graph(subject_id: SubjectPath, chat: ChatDep, project: ProjectDep, limit: GraphLimit = 50) -> GraphBody:
    """The subject's claim graph as core-mnx documents it: the `limit` newest claims and every edge touching one
    (`supersedes`: the newer claim of a slot replaced the older)."""
    every = chat.claims.histories(project, subject_id)
    claims = [ClaimOut.of(view) for h in _newest(every, limit) for view in h.views]
    shown = {claim.id for claim in claims}
    edges = _edges([edge for h in every for edge in h.edges() if shown & {edge.from_claim, edge.to_claim}])
    by_type: dict[str, int] = {}
    for edge in edges:
        by_type[edge.edge_type] = by_type.get(edge.edge_type, 0) + 1
    return GraphBody(subject_id=subject_id, claims_count=len(claims), edges_count=len(edges), edges_by_type=by_type,
                     claims=claims, edges=edges)


@router.get("/memories/{memory_id}/claims", response_model=MemoryClaimsBody)
def memory_claims(memory_id: ClaimId, chat: ChatDep, project: ProjectDep) -> MemoryClaimsBody:
    """The claims that name the memory as their source (`source_memory_id`)."""
    memory = chat.memories.get(project, memory_id)
    views = chat.claims.of_memory(project, memory.subject_id, memory_id)
    return MemoryClaimsBody(data=[ClaimOut.of(view) for view in views], count=len(views))
