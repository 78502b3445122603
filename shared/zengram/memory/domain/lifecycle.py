"""The transitions of a memory that depend on other records: create (dedup, corroborate, supersede), import,
update, restore. Each reads what it needs through `RecordLookups` and returns the `Change`s to write.

A record store runs a transition inside its atomic write (SQLite: one transaction; DynamoDB: the reads its
conditional transaction then checks) and persists the changes as they are: which memory wins, what is
superseded, which error a caller gets, is decided here once, for every backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from zengram.kernel.errors import Conflict
from zengram.memory.domain.models import (
    ImportKind,
    ImportOutcome,
    Memory,
    MemoryChanges,
    MemoryNotFound,
    WriteKind,
    WriteOutcome,
)


class RecordLookups(Protocol):
    """The reads a transition makes, answered inside the store's atomic write."""

    def find(self, memory_id: str) -> Memory | None: ...

    def active_with_content(self, memory: Memory) -> Memory | None:
        """The active memory with `memory`'s (client_id, type, content_hash), if any (possibly `memory` itself)."""
        ...

    def label_holder(self, memory: Memory) -> Memory | None:
        """The active memory of `memory`'s client holding its `label` (fact key / status subject), if any."""
        ...


@dataclass(frozen=True)
class Change:
    """One record as read (None: new) and as it is to be written; a store writes a transition's changes atomically."""

    before: Memory | None
    after: Memory


@dataclass(frozen=True)
class Creation:
    """What storing a new memory does: `changes` to write (CREATED), or one `observation` to count (CORROBORATED,
    persisted as counters: it is no revision), or nothing (DEDUPLICATED)."""

    outcome: WriteOutcome
    changes: tuple[Change, ...] = ()
    observation: Change | None = None


def require(lookups: RecordLookups, memory_id: str) -> Memory:
    memory = lookups.find(memory_id)
    if memory is None:
        raise MemoryNotFound(memory_id)
    return memory


def create(memory: Memory, lookups: RecordLookups, *, max_observers: int) -> Creation:
    """Among active memories of the client with the same type and content: one from the same agent (or already
    observed by it) → nothing changes; one from another agent → it is corroborated. Otherwise the memory is
    created, superseding the active memory that holds its key/subject."""
    existing = lookups.active_with_content(memory)
    if existing is not None:
        observed = existing.observed_by_agent(memory.source_agent, memory.created_at, max_observers)
        if observed is None:
            return Creation(WriteOutcome(kind=WriteKind.DEDUPLICATED, memory=existing))
        return Creation(WriteOutcome(kind=WriteKind.CORROBORATED, memory=observed),
                        observation=Change(existing, observed))
    holder = lookups.label_holder(memory)
    if holder is None:
        return Creation(WriteOutcome(kind=WriteKind.CREATED, memory=memory), changes=(Change(None, memory),))
    created = memory.model_copy(update={"supersedes": holder.id})
    superseded = holder.displaced_by(created.id, created.created_at)
    return Creation(WriteOutcome(kind=WriteKind.CREATED, memory=created, superseded=superseded),
                    changes=(Change(None, created), Change(holder, superseded)))


def import_outcome(memory: Memory, lookups: RecordLookups) -> ImportOutcome:
    """An imported memory is stored exactly as given, or not at all: an existing id is a duplicate; an active
    memory also clashes with another active memory of the same content, or holding its key/subject (nothing is
    superseded). An inactive memory (superseded or deleted) clashes with nothing but its id."""
    if lookups.find(memory.id) is not None:
        return ImportOutcome(kind=ImportKind.DUPLICATE_ID, existing_id=memory.id)
    if memory.active:
        for holder, clash in ((lookups.active_with_content(memory), ImportKind.DUPLICATE_CONTENT),
                              (lookups.label_holder(memory), ImportKind.LABEL_HELD)):
            if holder is not None:  # itself: imported by a racing caller after the id was looked up
                kind = ImportKind.DUPLICATE_ID if holder.id == memory.id else clash
                return ImportOutcome(kind=kind, existing_id=holder.id)
    return ImportOutcome(kind=ImportKind.IMPORTED)


def update(current: Memory, changes: MemoryChanges, at: datetime, lookups: RecordLookups, *,
           expected_revision: int | None = None) -> Change:
    """A PATCH (`Memory.patched`); new content of an active memory must not duplicate another active one."""
    updated = current.patched(changes, at, expected_revision=expected_revision)
    if current.active and updated.content_hash != current.content_hash:
        twin = lookups.active_with_content(updated)
        if twin is not None and twin.id != current.id:
            raise Conflict(f"content: duplicates active memory {twin.id}")
    return Change(current, updated)


def restore(current: Memory, at: datetime, lookups: RecordLookups) -> list[Change]:
    """Makes a superseded memory active again, superseding whichever memory now holds its key/subject. An active
    memory needs nothing (no changes); a deleted one, or one whose content is active elsewhere, is a Conflict."""
    if current.active:
        return []
    restored = current.reactivated(at)
    twin = lookups.active_with_content(current)
    if twin is not None:
        raise Conflict(f"memory {twin.id} with the same content is active")
    holder = lookups.label_holder(current)
    displaced = [Change(holder, holder.displaced_by(current.id, at))] if holder is not None else []
    return [Change(current, restored), *displaced]


def deactivations_first(changes: Sequence[Change]) -> list[Change]:
    """The order a store that checks uniqueness row by row writes changes in: memories leaving the active set
    before those entering it (a superseded fact gives up its key before the new one takes it)."""
    return sorted(changes, key=lambda change: change.after.active)
