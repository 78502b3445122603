"""The `ClaimStore` contract (zengram/chat/ports.py), for every adapter; and what the domain derives from a
subject's claims as a store hands them back (supersession, retraction restoring the previous truth)."""

from __future__ import annotations

from typing import Any

import pytest
from zengram.chat.domain.claims import Claim, ClaimStatus, histories
from zengram.chat.domain.tenancy import new_id
from zengram.kernel.errors import Conflict, StaleRevision

from tests.contract.chat.conftest import ChatStores
from tests.contract.chat.helpers import at


def claim(slot: str, value: Any, *, seconds: float = 0, subject: str = "alice", project: str = "acme",
          **fields: Any) -> Claim:
    moment = at(seconds)
    return Claim(**{"id": new_id("clm"), "project_id": project, "subject_id": subject, "slot": slot,
                    "predicate": slot, "value": value, "created_at": moment, "updated_at": moment, **fields})


def test_claims_read_back_whole_by_id_and_only_in_their_project(stores: ChatStores) -> None:
    made = claim("diet", {"kind": "vegetarian", "since": 2020}, confidence=0.7, source="chat",
                 source_memory_id="mem_1", claim_type="preference", valid_until=at(3600))
    assert stores.claims.add(made) == made
    assert stores.claims.get("acme", made.id) == made
    assert stores.claims.get("globex", made.id) is None
    assert stores.claims.get("acme", "clm_unknown") is None
    with pytest.raises(Conflict):
        stores.claims.add(made)


def test_a_subjects_claims_are_listed_oldest_first(stores: ChatStores) -> None:
    later = stores.claims.add(claim("city", "Porto", seconds=20))
    first = stores.claims.add(claim("city", "Lisbon", seconds=10))
    other = stores.claims.add(claim("color", "blue", seconds=15))
    stores.claims.add(claim("city", "Paris", subject="bob"))
    stores.claims.add(claim("city", "Rome", project="globex"))
    assert [c.id for c in stores.claims.of_subject("acme", "alice")] == [first.id, other.id, later.id]
    assert stores.claims.of_subject("acme", "carol") == []


def test_save_replaces_a_claim_only_at_the_revision_read(stores: ChatStores) -> None:
    made = stores.claims.add(claim("city", "Lisbon"))
    retracted = stores.claims.save(made.retracted("wrong city", at(5)), made.revision)
    assert stores.claims.get("acme", made.id) == retracted and retracted.revision == 2
    with pytest.raises(StaleRevision):
        stores.claims.save(made.retracted("again", at(6)), made.revision)
    with pytest.raises(StaleRevision):
        stores.claims.save(claim("ghost", 1), 1)
    [listed] = stores.claims.of_subject("acme", "alice")
    assert listed.retract_reason == "wrong city" and listed.retracted_at == at(5)


def test_a_slot_holds_its_newest_claim_and_keeps_the_rest_as_history(stores: ChatStores) -> None:
    lisbon = stores.claims.add(claim("city", "Lisbon", seconds=1))
    porto = stores.claims.add(claim("city", "Porto", seconds=2))
    stores.claims.add(claim("color", "blue", seconds=3, valid_from=at(100)))  # not valid yet
    city, color = histories(stores.claims.of_subject("acme", "alice"), at(10))
    assert [(v.claim.value, v.status, v.superseded_by) for v in city.views] == [
        ("Lisbon", ClaimStatus.SUPERSEDED, porto.id), ("Porto", ClaimStatus.ACTIVE, None)]
    assert color.active is None and color.views[0].status is ClaimStatus.INACTIVE
    assert [(e.from_claim, e.to_claim) for e in city.edges()] == [(porto.id, lisbon.id)]

    stores.claims.save(porto.retracted("moved back", at(11)), porto.revision)
    city, _ = histories(stores.claims.of_subject("acme", "alice"), at(12))
    assert city.active is not None and city.active.claim.id == lisbon.id  # the previous truth is restored
    assert [v.status for v in city.views] == [ClaimStatus.ACTIVE, ClaimStatus.RETRACTED]
