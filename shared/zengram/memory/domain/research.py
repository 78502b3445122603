"""Research (POST /research): the request, what the LLM answers, and the state the loop carries between steps.

`ResearchState` is plain JSON so the same steps run in-process (embedded) and as Step Functions Task states:
it carries memory ids, never whole memories; every step re-reads what it needs from the record store.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from zengram.kernel.text_rules import NotBlank
from zengram.memory.domain.llm import LLMInfo
from zengram.memory.domain.requests import ClientId, JsonInteger

MAX_TOPIC_CHARS = 1_000
MAX_ITERATIONS = 4
DEFAULT_ITERATIONS = 2
NEXT_QUERY_CHARS = 400


class ResearchRequest(BaseModel):
    """Body of POST /research."""

    model_config = ConfigDict(extra="ignore")

    topic: Annotated[str, StringConstraints(max_length=MAX_TOPIC_CHARS), NotBlank()]
    client_id: ClientId | None = None
    max_iterations: JsonInteger = Field(default=DEFAULT_ITERATIONS, ge=1, le=MAX_ITERATIONS)


class SufficiencyStatus(StrEnum):
    SUFFICIENT = "SUFFICIENT"
    INSUFFICIENT = "INSUFFICIENT"


class Judgement(BaseModel):
    """The judge's answer: a draft, whether the memories suffice, and what is still missing."""

    draft: str = ""
    status: SufficiencyStatus
    reason: str = ""
    missing: list[str] = Field(default_factory=list)


class Synthesis(BaseModel):
    """The synthesizer's answer; every claim should end with `[mem:<id>]` citations."""

    answer: str
    key_findings: list[str] = Field(default_factory=list)
    unresolved: list[str] = Field(default_factory=list)


class QueryTrace(BaseModel):
    query: str
    retrieved: int
    cumulative: int


class ResearchResult(BaseModel):
    """What synthesis produced, citations already checked against the memories it saw, and which model
    answered (the step that called it may run in another process than the API)."""

    answer: str
    key_findings: list[str]
    unresolved: list[str]
    cited_memory_ids: list[str]
    memories_analyzed: int
    llm: LLMInfo


class ResearchState(BaseModel):
    """Everything the loop knows between two steps. Small on purpose: a Step Functions payload.

    `query` is the query the next Retrieve runs; Judge sets it from the missing facts and flags
    `repeated_query` when that query was already run (or is empty), which ends the loop.
    """

    topic: str
    client_id: str | None = None
    client_ids: list[str] | None = None  # the caller's tenant scope (an API key's clients); None: every client
    max_iterations: int = DEFAULT_ITERATIONS
    query: str
    iterations: int = 0
    memory_ids: list[str] = Field(default_factory=list)
    query_trace: list[QueryTrace] = Field(default_factory=list)
    judgement: Judgement | None = None
    repeated_query: bool = False
    result: ResearchResult | None = None

    @classmethod
    def start(cls, request: ResearchRequest, client_ids: list[str] | None = None) -> ResearchState:
        return cls(topic=request.topic, client_id=request.client_id, client_ids=client_ids,
                   max_iterations=request.max_iterations, query=request.topic)

    @property
    def partial(self) -> bool:
        """The loop ended without the judge declaring the memories sufficient."""
        return self.judgement is None or self.judgement.status is not SufficiencyStatus.SUFFICIENT


def next_query(missing: list[str]) -> str:
    """The gap query: the missing facts joined, cut to 400 characters (semantics.md)."""
    return "; ".join(part.strip() for part in missing if part.strip())[:NEXT_QUERY_CHARS]


def loop_is_done(state: ResearchState) -> bool:
    """After Judge: synthesize now, or retrieve again? The ASL Choice state applies the same three rules."""
    sufficient = state.judgement is not None and state.judgement.status is SufficiencyStatus.SUFFICIENT
    return sufficient or state.repeated_query or state.iterations >= state.max_iterations
