"""Claims about a subject: assert, read by id or slot, the truth of every slot, history, retract; and what a
completion injects (docs/chat.md, "Claims")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zengram.chat.domain.claims import (
    DEFAULT_CONFIDENCE,
    PROFILE_SCHEMA,
    Claim,
    ClaimCreate,
    ClaimView,
    SlotHistory,
    histories,
    slot_history,
)
from zengram.chat.domain.tenancy import new_id
from zengram.chat.ports import ClaimStore
from zengram.kernel.content import Scrubber
from zengram.kernel.errors import NotFound, StaleRevision
from zengram.kernel.ports import Clock

_RETRACT_ATTEMPTS = 5


class ClaimService:
    def __init__(self, store: ClaimStore, clock: Clock, scrubber: Scrubber) -> None:
        self._store = store
        self._clock = clock
        self._scrubber = scrubber

    def create(self, project_id: str, body: ClaimCreate) -> tuple[Claim, SlotHistory]:
        """Stores the claim as its slot's newest: it supersedes the slot's previous value (kept as history).
        Returns it with its slot's history as it is now."""
        body.checked()
        now = self._clock.now()
        claim = self._store.add(Claim(
            id=new_id("clm"), project_id=project_id, subject_id=body.subject_id, slot=body.slot_name,
            predicate=body.predicate_name, value=self._scrubber.scrub_value(body.claimed_value),
            claim_type=body.claim_type, confidence=body.confidence if body.confidence is not None
            else DEFAULT_CONFIDENCE, source=self._scrubber.scrub_optional(body.source_label),
            source_memory_id=body.source_memory_id, valid_from=body.valid_from, valid_until=body.valid_until,
            created_at=now, updated_at=now))
        return claim, self.slot(project_id, claim.subject_id, claim.slot)

    def get(self, project_id: str, claim_id: str) -> tuple[ClaimView, SlotHistory]:
        claim = self._store.get(project_id, claim_id)
        if claim is None:
            raise NotFound(f"claim {claim_id} not found")
        history = self.slot(project_id, claim.subject_id, claim.slot)
        return next(view for view in history.views if view.claim.id == claim_id), history

    def slot(self, project_id: str, subject_id: str, slot: str) -> SlotHistory:
        claims = [claim for claim in self._store.of_subject(project_id, subject_id) if claim.slot == slot]
        return slot_history(slot, claims, self._clock.now())

    def active(self, project_id: str, subject_id: str, slot: str) -> ClaimView:
        """The slot's truth (NotFound when it has none)."""
        view = self.slot(project_id, subject_id, slot).active
        if view is None:
            raise NotFound(f"slot '{slot}' of subject {subject_id} not found")
        return view

    def histories(self, project_id: str, subject_id: str) -> list[SlotHistory]:
        """Every slot of the subject with its claims, slots by name."""
        return histories(self._store.of_subject(project_id, subject_id), self._clock.now())

    def truth(self, project_id: str, subject_id: str) -> list[ClaimView]:
        """The active claim of every slot that has one, slots by name."""
        return [view for view in (h.active for h in self.histories(project_id, subject_id)) if view is not None]

    def of_memory(self, project_id: str, subject_id: str, memory_id: str) -> list[ClaimView]:
        """The claims that name a memory as their source, oldest first."""
        views = [view for history in self.histories(project_id, subject_id) for view in history.views
                 if view.claim.source_memory_id == memory_id]
        return sorted(views, key=lambda view: (view.claim.created_at, view.claim.id))

    def retract(self, project_id: str, claim_id: str, reason: str) -> tuple[Claim, ClaimView | None, bool]:
        """Retracts a claim (the record is kept); when it was its slot's truth, the slot's previous claim becomes
        the truth again. Returns the claim, the slot's active claim afterwards, and whether a previous one was
        restored. Retracting a retracted claim changes nothing."""
        for _ in range(_RETRACT_ATTEMPTS):
            claim = self._store.get(project_id, claim_id)
            if claim is None:
                raise NotFound(f"claim {claim_id} not found")
            before = self.slot(project_id, claim.subject_id, claim.slot).active
            if claim.is_retracted:
                return claim, before, False
            try:
                retracted = self._store.save(claim.retracted(self._scrubber.scrub(reason), self._clock.now()),
                                             claim.revision)
            except StaleRevision:
                continue  # retracted meanwhile by someone else: read again
            after = self.slot(project_id, claim.subject_id, claim.slot).active
            was_truth = before is not None and before.claim.id == claim_id
            return retracted, after, was_truth and after is not None
        raise StaleRevision(f"claim {claim_id} kept changing; try again")

    def delete_slot(self, project_id: str, subject_id: str, slot: str, reason: str) -> int:
        """Retracts every claim of the slot still retained (a deleted profile field), keeping the records; returns
        how many (NotFound when the slot has no truth)."""
        history = self.slot(project_id, subject_id, slot)
        if history.active is None:
            raise NotFound(f"field '{slot}' of subject {subject_id} not found")
        retained = [view.claim.id for view in history.views if not view.claim.is_retracted]
        for claim_id in reversed(retained):
            self.retract(project_id, claim_id, reason)
        return len(retained)

    def injected(self, project_id: str, subject_id: str) -> Mapping[str, Any]:
        """What a completion with recall on injects: the truth of every slot, slot → value."""
        return {view.claim.slot: view.claim.value for view in self.truth(project_id, subject_id)}

    def profile_schema(self) -> tuple[tuple[str, str, str], ...]:
        """The profile's system fields (key, type, description); any other slot name is a custom field."""
        return PROFILE_SCHEMA
