"""POST /research's body."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from zengram.memory.domain.llm import LLMInfo
from zengram.web.schemas import documented_error


class ResearchQueryTrace(BaseModel):
    query: str
    retrieved: int
    cumulative: int


class ResearchSufficiency(BaseModel):
    status: str
    reason: str
    missing: list[str]


class ResearchLLM(LLMInfo):
    pass  # LLMInfo under the name the OpenAPI document (and so the SDK) has always given /research's `llm`


class ResearchBody(BaseModel):
    """POST /research (zengram-api.md "Research")."""

    topic: str
    answer: str
    key_findings: list[str]
    unresolved: list[str]
    cited_memory_ids: list[str]
    partial: bool
    iterations: int
    memories_analyzed: int
    query_trace: list[ResearchQueryTrace]
    sufficiency: ResearchSufficiency
    llm: ResearchLLM


RESEARCH_ERRORS: dict[int | str, dict[str, Any]] = {
    502: documented_error("The LLM answered with something that is not the expected JSON"),
    503: documented_error("Research disabled (RESEARCH_ENABLED unset) or LLM unavailable"),
}
