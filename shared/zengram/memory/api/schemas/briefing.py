"""GET /briefing's body."""

from __future__ import annotations

from pydantic import BaseModel

from zengram.memory.api.schemas import COMPACT_CHARS
from zengram.memory.api.schemas.records import CompactRecord, HeadlineRecord, MemoryRecord
from zengram.memory.domain.entities import EntityType
from zengram.memory.domain.models import Memory
from zengram.web.schemas import left_out


class BriefingItem(CompactRecord):
    """A memory of a `compact` briefing: the compact record, whether its content was cut, and its confidence."""

    truncated: bool
    confidence: float

    @classmethod
    def of(cls, memory: Memory) -> BriefingItem:
        return cls(**dict(CompactRecord.of(memory)), truncated=len(memory.content) > COMPACT_CHARS,
                   confidence=round(memory.confidence, 3))


class MentionBody(BaseModel):
    name: str
    type: EntityType
    count: int  # memories of the briefing naming it


class BriefingSummary(BaseModel):
    """Upstream's counts and lists, and ours (`returned`, `has_more`, `by_type`)."""

    total_entries: int  # memories the briefing covers (the agent's own and, compact, low-importance events left out)
    total_in_period: int  # every memory written since `since`
    events: int
    facts_updated: int
    status_changes: int
    decisions: int
    agents_active: list[str]
    clients_mentioned: list[str]  # without `global`
    entities_mentioned: list[MentionBody]  # the 15 named most
    returned: int
    has_more: bool
    by_type: dict[str, int]


class BrainStats(BaseModel):
    total_memories: int
    vectors_count: int | None  # null while the search index cannot be counted


BriefingEntry = BriefingItem | MemoryRecord


def briefing_entry(memory: Memory, form: str) -> BriefingEntry:
    """One memory of a briefing bucket: the whole record (`full`) or compact."""
    return memory if form == "full" else BriefingItem.of(memory)


class BriefingBody(BaseModel):
    """GET /briefing. `compact` and `full` answer the four buckets and `brain_stats`; `summary` the top five
    headlines of each type instead."""

    since: str
    format: str
    requesting_agent: str  # `agent`, or "unknown"
    generated_at: str
    agent: str | None = left_out()
    summary: BriefingSummary
    events: list[BriefingEntry] | None = left_out()
    facts_updated: list[BriefingEntry] | None = left_out()
    status_changes: list[BriefingEntry] | None = left_out()
    decisions: list[BriefingEntry] | None = left_out()
    top_events: list[HeadlineRecord] | None = left_out()
    top_facts: list[HeadlineRecord] | None = left_out()
    top_statuses: list[HeadlineRecord] | None = left_out()
    top_decisions: list[HeadlineRecord] | None = left_out()
    brain_stats: BrainStats | None = left_out()
