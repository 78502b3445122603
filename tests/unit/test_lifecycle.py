"""The memory state transitions (zengram.memory.domain.lifecycle and the `Memory` methods), over an in-memory lookup:
the
rules every record store inherits, checked without any store. The contract suites check that each adapter persists
what these return."""

from __future__ import annotations

from datetime import timedelta

import pytest
from zengram.kernel.content import content_hash
from zengram.kernel.errors import Conflict, StaleRevision
from zengram.memory.domain import lifecycle
from zengram.memory.domain.models import ImportKind, Memory, MemoryChanges, MemoryNotFound, MemoryType, WriteKind

from tests.contract.test_record_store import T0, make_memory

LATER = T0 + timedelta(hours=1)


class Records:
    """`RecordLookups` over a dict: what a store's transaction would read."""

    def __init__(self, *memories: Memory) -> None:
        self.by_id = {memory.id: memory for memory in memories}

    def find(self, memory_id: str) -> Memory | None:
        return self.by_id.get(memory_id)

    def active_with_content(self, memory: Memory) -> Memory | None:
        return next((m for m in self.by_id.values() if m.active and (m.client_id, m.type, m.content_hash)
                     == (memory.client_id, memory.type, memory.content_hash)), None)

    def label_holder(self, memory: Memory) -> Memory | None:
        return next((m for m in self.by_id.values() if m.active and m.client_id == memory.client_id
                     and m.type is memory.type and m.label is not None and m.label == memory.label), None)


def fact(content: str, key: str = "stack", **fields: object) -> Memory:
    return make_memory(content, type=MemoryType.FACT, key=key, **fields)  # type: ignore[arg-type]


def test_same_agent_deduplicates_another_agent_corroborates_up_to_max_observers() -> None:
    first = make_memory()
    records = Records(first)
    assert lifecycle.create(make_memory(), records, max_observers=2).outcome.kind is WriteKind.DEDUPLICATED
    creation = lifecycle.create(make_memory(source_agent="n8n", at=LATER), records, max_observers=2)
    assert creation.outcome.kind is WriteKind.CORROBORATED and creation.changes == ()
    assert creation.observation is not None and creation.observation.before == first
    observed = creation.observation.after
    assert (observed.observed_by, observed.observation_count, observed.last_observed_at) == (
        ["claude-code", "n8n"], 2, LATER)
    assert observed.revision == first.revision  # an observation is no revision
    full = observed.observed_by_agent("third", LATER, max_observers=2)
    assert full is not None and full.observed_by == ["claude-code", "n8n"] and full.observation_count == 3


def test_a_new_fact_supersedes_the_holder_of_its_key() -> None:
    old = fact("Stack is Next.js 14")
    creation = lifecycle.create(fact("Stack is Next.js 15", at=LATER), Records(old), max_observers=20)
    created, superseded = (change.after for change in creation.changes)
    assert created.supersedes == old.id and creation.outcome.superseded == superseded
    assert (superseded.active, superseded.superseded_by, superseded.superseded_at, superseded.valid_to) == (
        False, created.id, LATER, LATER)
    assert superseded.revision == old.revision + 1
    # a store that checks uniqueness row by row writes the superseded one first
    assert [c.after.id for c in lifecycle.deactivations_first(creation.changes)] == [old.id, created.id]


def test_update_refuses_deleted_stale_and_duplicate_content() -> None:
    memory, other = make_memory("Acme deploys on Fridays"), make_memory("Acme deploys on Mondays")
    records = Records(memory, other)
    same_as_other = MemoryChanges(content=other.content, content_hash=content_hash(other.content))
    with pytest.raises(Conflict, match=f"content: duplicates active memory {other.id}"):
        lifecycle.update(memory, same_as_other, LATER, records)
    with pytest.raises(StaleRevision, match=r"changed meanwhile \(revision 1, expected 7\)"):
        lifecycle.update(memory, MemoryChanges(metadata={"a": 1}), LATER, records, expected_revision=7)
    deleted = memory.soft_deleted("claude-code", None, LATER)
    with pytest.raises(Conflict, match="is deleted; restore is not possible"):
        lifecycle.update(deleted, MemoryChanges(metadata={"a": 1}), LATER, records)
    change = lifecycle.update(memory, MemoryChanges(metadata={"a": 1}), LATER, records, expected_revision=1)
    assert (change.after.metadata, change.after.revision, change.after.updated_at) == ({"a": 1}, 2, LATER)


def test_delete_is_idempotent() -> None:
    deleted = make_memory().soft_deleted("claude-code", "wrong", LATER)
    assert (deleted.active, deleted.deleted_by, deleted.delete_reason, deleted.revision) == (
        False, "claude-code", "wrong", 2)
    assert deleted.soft_deleted("someone-else", None, LATER + timedelta(1)) is deleted


def test_restore_rules() -> None:
    old = fact("Stack is Next.js 14").displaced_by("new", T0)
    new = fact("Stack is Next.js 15")
    records = Records(old, new)
    assert lifecycle.restore(new, LATER, records) == []  # already active
    restored, displaced = lifecycle.restore(old, LATER, records)
    assert restored.after.active and restored.after.superseded_by is None and restored.after.valid_to is None
    assert displaced.before == new and displaced.after.superseded_by == old.id
    with pytest.raises(Conflict, match="is deleted and cannot be restored"):
        lifecycle.restore(old.soft_deleted("claude-code", None, LATER), LATER, records)
    twin = make_memory("Stack is Next.js 14", type=MemoryType.FACT)  # active, same content, no key
    with pytest.raises(Conflict, match=f"memory {twin.id} with the same content is active"):
        lifecycle.restore(old, LATER, Records(old, twin))
    with pytest.raises(MemoryNotFound, match="memory missing not found"):
        lifecycle.require(records, "missing")


def test_import_outcomes() -> None:
    held = fact("Stack is Next.js 14")
    records = Records(held)
    assert lifecycle.import_outcome(held, records).kind is ImportKind.DUPLICATE_ID
    twin = lifecycle.import_outcome(fact("Stack is Next.js 14", key="other"), records)
    assert (twin.kind, twin.existing_id) == (ImportKind.DUPLICATE_CONTENT, held.id)
    assert lifecycle.import_outcome(fact("Stack is Vue"), records).kind is ImportKind.LABEL_HELD
    inactive = fact("Stack is Next.js 14").displaced_by(held.id, T0)
    assert lifecycle.import_outcome(inactive, records).kind is ImportKind.IMPORTED  # clashes only by id


def test_consolidation_transitions() -> None:
    active, merged_id = make_memory(), "merged"
    merged = active.merged_into(merged_id, LATER)
    assert merged is not None and (merged.active, merged.superseded_by, merged.consolidated) == (False, merged_id, True)
    assert merged.merged_into("another", LATER) is None  # inactive and consolidated: nothing left to do
    assert active.merged_into(active.id, LATER) is None
    assert active.soft_deleted("x", None, LATER).merged_into(merged_id, LATER) is None
    consolidated = active.marked_consolidated(LATER)
    assert consolidated is not None and consolidated.consolidated and consolidated.marked_consolidated(LATER) is None
    expired = active.expired("consolidation", "old", LATER)
    assert expired is not None and (expired.deleted_by, expired.delete_reason) == ("consolidation", "old")
    assert active.model_copy(update={"access_count": 1}).expired("consolidation", "old", LATER) is None
    assert fact("a fact").expired("consolidation", "old", LATER) is None
