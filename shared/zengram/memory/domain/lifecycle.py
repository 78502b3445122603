"""The transitions of a memory that depend on other records: create (dedup, corroborate, supersede), import,
update, restore. Each reads what it needs through `RecordLookups` and returns the `Change`s to write. The memory
a create or an import stores is built from its draft by `memory_from_draft`, the one factory of a `Memory`.

A record store runs a transition inside its atomic write (SQLite: one transaction; DynamoDB: the reads its
conditional transaction then checks) and persists the changes as they are: which memory wins, what is
superseded, which error a caller gets, is decided here once, for every backend.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from zengram.kernel.content import Scrubber, content_hash
from zengram.kernel.errors import Conflict
from zengram.memory.domain.entities import EntityRef
from zengram.memory.domain.models import (
    TIMELY_TYPES,
    ImportKind,
    ImportOutcome,
    Memory,
    MemoryChanges,
    MemoryNotFound,
    WriteKind,
    WriteOutcome,
)
from zengram.memory.domain.requests import ImportRecord, MemoryDraft


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


def memory_from_draft(draft: MemoryDraft, scrubber: Scrubber, *, content: str, client_id: str, now: datetime,
                      entities: Sequence[EntityRef] = ()) -> Memory:
    """The memory a draft stores: `content` is the draft's content scrubbed (the caller resolved `client_id` and
    the `entities` from it); its other texts are scrubbed here, and a timely type is valid from its creation
    unless it says otherwise. A POST /memory draft is a new memory: a fresh id, created and observed `now` by its
    agent. An `ImportRecord` keeps what it carries (id, times, lifecycle, counters), else defaults as a new one."""
    scrub = scrubber.scrub_optional
    own = _carried_over(draft, scrub, now) if isinstance(draft, ImportRecord) else _new_record(draft, now)
    return Memory(
        type=draft.type,
        content=content,
        content_hash=content_hash(content),
        source_agent=draft.source_agent,
        client_id=client_id,
        category=draft.category,
        importance=draft.importance,
        knowledge_category=draft.knowledge_category,
        key=scrub(draft.key),
        subject=scrub(draft.subject),
        status_value=scrub(draft.status_value),
        metadata=scrubber.scrub_value(draft.metadata),
        valid_from=draft.valid_from or (own["created_at"] if draft.type in TIMELY_TYPES else None),
        valid_to=draft.valid_to,
        entities=list(entities),
        **own,
    )


def _new_record(draft: MemoryDraft, now: datetime) -> dict[str, Any]:
    """A new memory's own fields: a fresh id, created, updated and observed `now` by the draft's agent."""
    return {"id": str(uuid.uuid4()), "created_at": now, "updated_at": now, "observed_by": [draft.source_agent],
            "last_observed_at": now}


def _carried_over(record: ImportRecord, scrub: Callable[[str | None], str | None], now: datetime) -> dict[str, Any]:
    """What an import record carries over: its id, times, lifecycle and counters (created `now` when it has no
    creation time); who deleted it, and why, only when it is deleted."""
    created = record.created_at or now
    return {
        "id": record.id or str(uuid.uuid4()),
        "created_at": created,
        "updated_at": record.updated_at or created,
        "active": record.resolved_active,
        "supersedes": record.supersedes,
        "superseded_by": record.superseded_by,
        "superseded_at": record.superseded_at,
        "deleted_at": record.deleted_at,
        "deleted_by": record.deleted_by if record.deleted_at else None,
        "delete_reason": scrub(record.delete_reason) if record.deleted_at else None,
        "observed_by": record.observed_by if record.observed_by is not None else [record.source_agent],
        "observation_count": record.observation_count,
        "last_observed_at": record.last_observed_at,
        "access_count": record.access_count,
        "last_accessed_at": record.last_accessed_at,
        "confidence": record.confidence,
        "consolidated": record.consolidated,
        "revision": record.revision,
    }


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
