"""Session briefing: what other agents stored since a moment, bucketed by type."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Query

from zengram.kernel.timestamps import format_timestamp, utc_now
from zengram.memory.api.deps import KnowledgeServiceDep, StatsServiceDep
from zengram.memory.api.schemas.briefing import BrainStats, BriefingBody, BriefingSummary, MentionBody, briefing_entry
from zengram.memory.api.schemas.records import HeadlineRecord
from zengram.memory.domain.models import MemoryType
from zengram.memory.domain.requests import BriefingFormat, BriefingRequest
from zengram.web.access import ScopeDep
from zengram.web.schemas import ERROR_RESPONSES

if TYPE_CHECKING:
    from zengram.memory.services.knowledge import Briefing

router = APIRouter(tags=["briefing"], responses=ERROR_RESPONSES)

TOP_HEADLINES = 5  # per type, in a `summary` briefing (as upstream)
BUCKETS = {MemoryType.EVENT: "events", MemoryType.FACT: "facts_updated", MemoryType.STATUS: "status_changes",
           MemoryType.DECISION: "decisions"}  # a full or compact briefing's list of each type
HEADLINE_LISTS = {MemoryType.EVENT: "top_events", MemoryType.FACT: "top_facts", MemoryType.STATUS: "top_statuses",
                  MemoryType.DECISION: "top_decisions"}


@router.get("/briefing", response_model=BriefingBody)
def get_briefing(request: Annotated[BriefingRequest, Query()], knowledge: KnowledgeServiceDep,
                 stats: StatsServiceDep, scope: ScopeDep) -> BriefingBody:
    briefing = knowledge.briefing(request, scope)
    head = {"since": format_timestamp(request.since), "format": request.format.value,
            "requesting_agent": request.agent or "unknown", "generated_at": format_timestamp(utc_now()),
            "agent": request.agent, "summary": _summary(briefing)}
    if request.format is BriefingFormat.SUMMARY:
        return BriefingBody(**head, **{name: [HeadlineRecord.of(m) for m in briefing.bucket(type_)[:TOP_HEADLINES]]
                                       for type_, name in HEADLINE_LISTS.items()})
    total, indexed = stats.totals(scope)
    buckets = {name: [briefing_entry(memory, request.format.value) for memory in briefing.bucket(type_)]
               for type_, name in BUCKETS.items()}
    return BriefingBody(**head, **buckets, brain_stats=BrainStats(total_memories=total, vectors_count=indexed))


def _summary(briefing: Briefing) -> BriefingSummary:
    counts = {name: briefing.by_type[type_.value] for type_, name in BUCKETS.items()}
    return BriefingSummary(
        total_entries=briefing.matched,
        total_in_period=briefing.in_period,
        **counts,
        agents_active=briefing.active_agents,
        clients_mentioned=briefing.mentioned_clients,
        entities_mentioned=[MentionBody(name=entity.name, type=entity.type, count=entity.mentions)
                            for entity in briefing.top_entities],
        returned=len(briefing.memories),
        has_more=briefing.matched > len(briefing.memories) or briefing.scan_truncated,
        by_type=briefing.by_type,
    )
