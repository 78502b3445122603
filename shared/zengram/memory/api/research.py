"""Agentic multi-hop retrieval: retrieve, judge sufficiency, requery the gap, then a cited synthesis."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from zengram.kernel.errors import ResearchFailed
from zengram.memory.api.deps import ResearchServiceDep
from zengram.memory.api.schemas.research import (
    RESEARCH_ERRORS,
    ResearchBody,
    ResearchLLM,
    ResearchQueryTrace,
    ResearchSufficiency,
)
from zengram.memory.domain.research import ResearchRequest, ResearchState
from zengram.web.access import ScopeDep
from zengram.web.rate_limits import refund_failed_heavy
from zengram.web.schemas import ERROR_RESPONSES

router = APIRouter(tags=["research"], responses=ERROR_RESPONSES)


@router.post("/research", response_model=ResearchBody, responses=RESEARCH_ERRORS,
             dependencies=[Depends(refund_failed_heavy)])
def research(body: ResearchRequest, research: ResearchServiceDep, scope: ScopeDep) -> ResearchBody:
    return research_body(research.run(body, scope))


def research_body(state: ResearchState) -> ResearchBody:
    """The response from a finished loop's state (the same for every runner)."""
    result, judgement = state.result, state.judgement
    if result is None or judgement is None:
        raise ResearchFailed("research ended without a synthesis")
    return ResearchBody(
        topic=state.topic,
        answer=result.answer,
        key_findings=result.key_findings,
        unresolved=result.unresolved,
        cited_memory_ids=result.cited_memory_ids,
        partial=state.partial,
        iterations=state.iterations,
        memories_analyzed=result.memories_analyzed,
        query_trace=[ResearchQueryTrace(**trace.model_dump()) for trace in state.query_trace],
        sufficiency=ResearchSufficiency(status=judgement.status.value, reason=judgement.reason,
                                        missing=judgement.missing),
        llm=ResearchLLM(**result.llm.model_dump()),
    )
