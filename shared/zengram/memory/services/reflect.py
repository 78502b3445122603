"""Reflect (POST /reflect): the memories about a topic, synthesised by the LLM with checked citations."""

from __future__ import annotations

from collections.abc import Sequence

from zengram.kernel.errors import LLMUnavailable
from zengram.kernel.keys import TenantScope
from zengram.kernel.ports import LanguageModel
from zengram.kernel.timestamps import format_timestamp
from zengram.memory.domain.citations import CitationChecker
from zengram.memory.domain.llm import LLMInfo, memory_line
from zengram.memory.domain.models import Memory
from zengram.memory.domain.reflect import Reflection, ReflectRequest, ReflectResult
from zengram.memory.domain.requests import SearchRequest
from zengram.memory.services.memory import MemoryService

REFLECT_SYSTEM = """You reflect on what a team of AI agents has stored in long-term memory about one topic.
Use only the memories given; each starts with its id as [mem:<id>].
- summary: what the memories say about the topic, in 2 to 5 sentences, citing [mem:<id>].
- patterns: recurring themes or behaviours, each ending with the [mem:<id>] citations that support it.
- timeline: dated developments, oldest first, as "YYYY-MM-DD: what happened [mem:<id>]".
- contradictions: memories that disagree with each other, each entry citing both sides with [mem:<id>].
- gaps: what is still unknown, unclear or missing about the topic.
Cite only ids listed in the memories, copied exactly. Use empty lists where there is nothing to say."""


class ReflectService:
    """Retrieves up to `limit` memories with the product search (no access counting: analysing memories is
    not an agent recalling them), asks the LLM for a reflection, strips citations of memories it was not
    shown. With no memories found the LLM is not asked; with no LLM configured nothing is done (503)."""

    def __init__(self, memory: MemoryService, llm: LanguageModel) -> None:
        self._memory = memory
        self._llm = llm

    def reflect(self, request: ReflectRequest, scope: TenantScope = TenantScope.EVERYONE) -> ReflectResult:
        if scope.is_restricted and request.client_id is not None:
            scope.require(request.client_id)  # refused before the LLM check: 403 says more than 503
        if self._llm.provider == "none":  # a feature of the LLM: unavailable without one, whatever is stored
            raise LLMUnavailable.not_configured("/reflect")
        search = SearchRequest(q=request.topic, client_id=request.client_id, limit=request.limit)
        hits = self._memory.search_once(search, scope)
        memories = [hit.memory for hit in hits.hits]
        if not memories:
            return self._result(request, [], nothing_found(request.topic), [])
        answer = self._llm.complete_json(REFLECT_SYSTEM, reflect_prompt(request.topic, memories), Reflection)
        checker = CitationChecker(memory.id for memory in memories)
        reflection = Reflection(
            summary=checker.clean(answer.summary),
            patterns=checker.clean_all(answer.patterns),
            timeline=checker.clean_all(answer.timeline),
            contradictions=checker.clean_all(answer.contradictions),
            gaps=checker.clean_all(answer.gaps),
        )
        cited = checker.cited_ids([reflection.summary, *reflection.patterns, *reflection.timeline,
                                   *reflection.contradictions, *reflection.gaps])
        return self._result(request, memories, reflection, cited)

    def _result(
        self, request: ReflectRequest, memories: Sequence[Memory], reflection: Reflection, cited: list[str]
    ) -> ReflectResult:
        return ReflectResult(
            topic=request.topic, client_id=request.client_id, memories_analyzed=len(memories),
            reflection=reflection, cited_memory_ids=cited,
            llm=LLMInfo(provider=self._llm.provider, model=self._llm.model),
        )


def nothing_found(topic: str) -> Reflection:
    return Reflection(
        summary="No memories matched this topic, so there is nothing to reflect on.",
        patterns=[], timeline=[], contradictions=[],
        gaps=[f"Nothing has been stored about: {topic}"],
    )


def reflect_prompt(topic: str, memories: Sequence[Memory]) -> str:
    """The topic, then the memories oldest first (the timeline reads in order), each under its id."""
    ordered = sorted(memories, key=lambda memory: (_moment(memory), memory.id))
    lines = [f"Topic: {topic}", "", f"Memories ({len(ordered)}):"]
    return "\n".join([*lines, *(memory_line(memory) for memory in ordered)])


def _moment(memory: Memory) -> str:
    return format_timestamp(memory.valid_from or memory.created_at)

