"""A memory's history, read from the records themselves: its supersede chain, who corroborated it, how it was
used, and its confidence over time. Pure: the service fetches the records, this puts them in order.

The record keeps counters, not a log: `observation_count` with the last observation's time, `access_count` with
the last access's time. So the timeline names the last corroboration and the last access (with their counts), and
the confidence curve is the one `effective_confidence` gives from the recorded last access: before that access an
earlier, unrecorded one may have held it higher, so that part of the curve is a lower bound.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from zengram.memory.domain.models import Memory, shifted
from zengram.memory.domain.scoring import DECAYING_TYPES, effective_confidence

MAX_CHAIN = 50  # links followed each way: a chain longer than any real one, and no loop can hold the walk
CURVE_SAMPLES = 48
PROJECTION_DAYS = 30  # how far the curve looks ahead of now (where it is marked `projected`)
_JUST_BEFORE = timedelta(milliseconds=1)


class EventKind(StrEnum):
    CREATED = "created"
    CORROBORATED = "corroborated"
    ACCESSED = "accessed"
    SUPERSEDED = "superseded"
    DELETED = "deleted"


@dataclass(frozen=True)
class HistoryEvent:
    at: datetime
    kind: EventKind
    memory_id: str
    detail: str


@dataclass(frozen=True)
class ConfidencePoint:
    at: datetime
    confidence: float
    projected: bool  # after now: what decay will do if nobody uses the memory


@dataclass(frozen=True)
class MemoryHistory:
    memory: Memory
    chain: list[Memory]  # oldest first, `memory` included
    events: list[HistoryEvent]
    curve: list[ConfidencePoint]
    effective_confidence: float  # now, as search weighs it


def history_of(memory: Memory, fetch: Callable[[str], Memory | None], now: datetime,
               decay_factor: float) -> MemoryHistory:
    """`fetch` reads a linked record (None when it is gone or outside the caller's scope)."""
    chain = supersede_chain(memory, fetch)
    return MemoryHistory(memory, chain, timeline(chain), confidence_curve(memory, now, decay_factor),
                         round(_confidence_at(memory, now, decay_factor), 4))


def supersede_chain(memory: Memory, fetch: Callable[[str], Memory | None]) -> list[Memory]:
    """Every version of this memory's key or subject it is linked to, oldest first, itself included: back along
    `supersedes`, forward along `superseded_by`. A link to a record that is gone ends that side."""
    older: list[Memory] = []
    seen = {memory.id}
    current = memory
    while current.supersedes and current.supersedes not in seen and len(older) < MAX_CHAIN:
        previous = fetch(current.supersedes)
        if previous is None:
            break
        older.append(previous)
        seen.add(previous.id)
        current = previous
    newer: list[Memory] = []
    current = memory
    while current.superseded_by and current.superseded_by not in seen and len(newer) < MAX_CHAIN:
        following = fetch(current.superseded_by)
        if following is None:
            break
        newer.append(following)
        seen.add(following.id)
        current = following
    return [*reversed(older), memory, *newer]


def timeline(chain: list[Memory]) -> list[HistoryEvent]:
    """What happened to each version, in time order (ties keep the chain's order)."""
    events = [event for version in chain for event in _events_of(version)]
    return sorted(events, key=lambda event: event.at)


def _events_of(memory: Memory) -> list[HistoryEvent]:
    def event(at: datetime, kind: EventKind, detail: str) -> HistoryEvent:
        return HistoryEvent(at, kind, memory.id, detail)

    events = [event(memory.created_at, EventKind.CREATED, f"stored by {memory.source_agent}")]
    if memory.observation_count > 1 and memory.last_observed_at is not None:
        others = [agent for agent in memory.observed_by if agent != memory.source_agent]
        events.append(event(memory.last_observed_at, EventKind.CORROBORATED,
                            f"observed by {memory.observation_count} agents"
                            + (f" ({', '.join(others)} besides {memory.source_agent})" if others else "")))
    if memory.access_count and memory.last_accessed_at is not None:
        plural = "es" if memory.access_count != 1 else ""
        events.append(event(memory.last_accessed_at, EventKind.ACCESSED,
                            f"{memory.access_count} access{plural} in all; this is the last"))
    if memory.superseded_at is not None and memory.superseded_by:
        events.append(event(memory.superseded_at, EventKind.SUPERSEDED, f"superseded by {memory.superseded_by}"))
    if memory.deleted_at is not None:
        reason = f": {memory.delete_reason}" if memory.delete_reason else ""
        events.append(event(memory.deleted_at, EventKind.DELETED, f"deleted by {memory.deleted_by}{reason}"))
    return events


def confidence_curve(memory: Memory, now: datetime, decay_factor: float,
                     samples: int = CURVE_SAMPLES, projection_days: int = PROJECTION_DAYS) -> list[ConfidencePoint]:
    """`effective_confidence` from creation to `projection_days` after now: evenly spaced samples, plus the
    moments the curve turns (the last access resets the decay, so it is sampled just before and at it)."""
    end = shifted(now, timedelta(days=projection_days))
    start = min(memory.created_at, now)
    step = (end - start) / max(samples - 1, 1)
    moments = {start + step * index for index in range(samples)} | {now, end}
    access = memory.last_accessed_at
    if access is not None and start < access <= end:
        moments |= {access - _JUST_BEFORE, access}
    return [ConfidencePoint(at, round(_confidence_at(memory, at, decay_factor), 4), projected=at > now)
            for at in sorted(moments)]


def _confidence_at(memory: Memory, moment: datetime, decay_factor: float) -> float:
    """The confidence search would have used at `moment`: only an access made by then counts."""
    if memory.type not in DECAYING_TYPES:
        return memory.confidence
    accessed = memory.last_accessed_at
    as_then = memory if accessed is None or accessed <= moment else memory.model_copy(update={"last_accessed_at": None})
    return effective_confidence(as_then, moment, decay_factor)
