"""Record-store statistics (GET /stats): what each memory counts towards, and when a memory has decayed.

Pure: adapters keep these numbers cheap to read (SQL over indexes, DynamoDB counters and sparse GSIs) but
the definitions live here, once.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field

from zengram.memory.domain.models import Memory, MemoryType
from zengram.memory.domain.scoring import DECAYING_TYPES

DECAYED_BELOW = 0.5  # semantics.md: `decayed_below_50pct`
# A cutoff later than any real timestamp: "every such memory has decayed, whenever it was last touched".
ALWAYS = datetime.max.replace(tzinfo=UTC)


def _empty_by_type() -> dict[MemoryType, int]:
    return dict.fromkeys(MemoryType, 0)


class RecordStats(BaseModel):
    """Counts over the whole record store.

    - `total`: every memory not deleted, i.e. `active + superseded` (deleted ones are counted apart).
    - `superseded`: inactive and not deleted (in practice superseded; an imported inactive record too).
    - `by_type` and `consolidated`: over `total` (so `by_type` sums to `total`, as in the spec's example).
    - `decayed_below_50pct`: active facts and statuses whose effective confidence is below 0.5 now.
    - `pending_index`: memories whose last change has not reached the search index (deleted ones included), in
      the repair sweep's queue; `parked_index`: those the sweep gave up on after repeated failures.
    """

    model_config = ConfigDict(frozen=True)

    total: int = 0
    active: int = 0
    superseded: int = 0
    deleted: int = 0
    consolidated: int = 0
    by_type: dict[MemoryType, int] = Field(default_factory=_empty_by_type)
    decayed_below_50pct: int = 0
    pending_index: int = 0
    parked_index: int = 0


# -- what one memory counts towards (the DynamoDB counters add these up) ---------------------------------

TOTAL, ACTIVE, SUPERSEDED, DELETED, CONSOLIDATED = "total", "active", "superseded", "deleted", "consolidated"
TYPE_PREFIX = "type_"


def tally(memory: Memory | None) -> Counter[str]:
    """The counters `memory` adds one to (none for None, i.e. a memory that does not exist)."""
    if memory is None:
        return Counter()
    return tally_of(memory.type, active=memory.active, consolidated=memory.consolidated, deleted=memory.is_deleted)


def tally_of(type_: MemoryType, *, active: bool, consolidated: bool, deleted: bool) -> Counter[str]:
    """The counters a memory in this state adds one to."""
    if deleted:
        return Counter({DELETED: 1})
    names = [TOTAL, ACTIVE if active else SUPERSEDED, f"{TYPE_PREFIX}{type_.value}"]
    if consolidated:
        names.append(CONSOLIDATED)
    return Counter(names)


def tally_change(before: Memory | None, after: Memory | None) -> dict[str, int]:
    """How the counters move when `before` becomes `after` (None: not there); zero moves are left out."""
    delta = Counter(tally(after))
    delta.subtract(tally(before))
    return {name: moved for name, moved in delta.items() if moved}


def stats_from_counters(counters: dict[str, int], *, decayed: int, pending_index: int,
                        parked_index: int = 0) -> RecordStats:
    return RecordStats(
        total=counters.get(TOTAL, 0), active=counters.get(ACTIVE, 0), superseded=counters.get(SUPERSEDED, 0),
        deleted=counters.get(DELETED, 0), consolidated=counters.get(CONSOLIDATED, 0),
        by_type={type_: counters.get(f"{TYPE_PREFIX}{type_.value}", 0) for type_ in MemoryType},
        decayed_below_50pct=decayed, pending_index=pending_index, parked_index=parked_index,
    )


def stats_of(memories: Iterable[Memory], now: datetime, decay_factor: float, *, pending_index: int) -> RecordStats:
    """The same counts, taken memory by memory (a tenant scope's stats: the stores' counters span every client)."""
    counters: Counter[str] = Counter()
    decayed = 0
    for memory in memories:
        counters.update(tally(memory))
        decayed += has_decayed(memory, now, decay_factor)
    return stats_from_counters(counters, decayed=decayed, pending_index=pending_index)


# -- decay ---------------------------------------------------------------------------------------------------


def has_decayed(memory: Memory, now: datetime, decay_factor: float) -> bool:
    """An active fact or status whose effective confidence is below 0.5 now."""
    if memory.is_deleted or not decays(memory):
        return False
    cutoff = decayed_before(memory.confidence, now, decay_factor)
    return cutoff is not None and decay_reference(memory) < cutoff


def decays(memory: Memory) -> bool:
    """Whether `memory` can count as decayed: an active fact or status."""
    return memory.active and memory.type in DECAYING_TYPES


def decay_reference(memory: Memory) -> datetime:
    """The moment decay counts from: the last access, else creation (semantics.md)."""
    return memory.last_accessed_at or memory.created_at


def decayed_before(confidence: float, now: datetime, decay_factor: float) -> datetime | None:
    """The cutoff for memories of this `confidence`: decayed exactly when their reference time is earlier.
    `decay_factor` is in (0, 1], as the settings allow.

    `confidence × factor^days < 0.5` ⟺ `days > ln(2·confidence) / -ln(factor)`, so the cutoff is `now` minus
    that many days. None when such a memory never decays below 0.5; `ALWAYS` when it is below already.
    Comparing a reference time against one cutoff per confidence value is what lets stores count with a
    range over an index instead of computing every memory's confidence.
    """
    if confidence < DECAYED_BELOW:
        return ALWAYS
    if decay_factor >= 1.0:
        return None
    days = math.log(confidence / DECAYED_BELOW) / -math.log(decay_factor)
    try:
        return now - timedelta(days=days)
    except OverflowError:  # a factor so close to 1 that the cutoff is before year 1: nothing decays
        return None
