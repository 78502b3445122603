"""Session briefing: what other agents stored since a moment, bucketed by type."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from zengram.api.access import ScopeDep
from zengram.api.deps import KnowledgeServiceDep
from zengram.api.schemas import ERROR_RESPONSES, BriefingBody, BriefingSummary, MentionBody, briefing_entry
from zengram.domain.models import format_timestamp
from zengram.domain.requests import BriefingRequest
from zengram.services.knowledge import BUCKETS

router = APIRouter(tags=["briefing"], responses=ERROR_RESPONSES)


@router.get("/briefing", response_model=BriefingBody)
def get_briefing(request: Annotated[BriefingRequest, Query()], knowledge: KnowledgeServiceDep,
                 scope: ScopeDep) -> BriefingBody:
    briefing = knowledge.briefing(request, scope)
    form = request.format.value
    buckets = {name: [briefing_entry(memory, form) for memory in briefing.bucket(type_)]
               for type_, name in BUCKETS.items()}
    summary = BriefingSummary(
        total=briefing.matched,
        returned=len(briefing.memories),
        has_more=briefing.matched > len(briefing.memories) or briefing.scan_truncated,
        by_type=briefing.by_type,
        active_agents=briefing.active_agents,
        mentioned_clients=briefing.mentioned_clients,
        top_entities=[MentionBody(name=entity.name, type=entity.type, mentions=entity.mentions)
                      for entity in briefing.top_entities],
    )
    return BriefingBody(since=format_timestamp(request.since), agent=request.agent, format=form, summary=summary,
                        **buckets)
