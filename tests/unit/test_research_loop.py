"""The research loop (semantics.md "Reflect and research"): its stop rules, the gap query, the 40-memory cap of
synthesis and citation checking, over a real record store and index with a scripted language model."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from zengram.assembly.containers import Container
from zengram.kernel.errors import FeatureUnavailable, LLMInvalidResponse
from zengram.kernel.ports import JsonModel, LanguageModel
from zengram.memory.domain.models import MemoryType
from zengram.memory.domain.requests import MemoryDraft
from zengram.memory.domain.research import Judgement, ResearchRequest, ResearchState, loop_is_done, next_query
from zengram.memory.services.research import InProcessResearchRunner, ResearchService, ResearchSteps

MEMORY_LINE = re.compile(r"^\[mem:([^\]]+)\]", re.MULTILINE)


class ScriptedModel:
    """The `LanguageModel` port answering from a script; records every prompt it was given."""

    def __init__(self, *replies: dict[str, Any]) -> None:
        self.replies = list(replies)
        self.prompts: list[tuple[str, str, str]] = []

    @property
    def provider(self) -> str:
        return "scripted"

    @property
    def model(self) -> str:
        return "script-1"

    def complete_json(self, system: str, user: str, schema: type[JsonModel]) -> JsonModel:
        self.prompts.append((system, user, schema.__name__))
        if not self.replies:
            raise AssertionError("the model was asked more often than scripted")
        reply = self.replies.pop(0)
        if reply.get("invalid"):
            raise LLMInvalidResponse("LLM answer is not the expected JSON")
        return schema.model_validate(reply)


def judged(status: str, *missing: str, draft: str = "draft", reason: str = "why") -> dict[str, Any]:
    return {"draft": draft, "status": status, "reason": reason, "missing": list(missing)}


def judgement(status: str) -> Judgement:
    return Judgement.model_validate(judged(status))


def synthesis(answer: str = "answer", findings: list[str] | None = None) -> dict[str, Any]:
    return {"answer": answer, "key_findings": findings or [], "unresolved": ["nothing settles the date"]}


CORPUS = [
    ("decision", "We replaced the Redis caching approach with HTTP cache headers"),
    ("status", "The public API is in maintenance mode since the cache change"),
    ("event", "The Redis cluster was shut down on Friday"),
    ("fact", "Acme's billing runs on Stripe"),
    ("event", "Quarterly planning meeting moved to Thursday"),
]


@pytest.fixture
def corpus(hashing_container: Container) -> dict[str, str]:
    """content → id of a small corpus where the caching question takes two hops."""
    ids = {}
    for type_, content in CORPUS:
        extra: dict[str, Any] = {"subject": "public-api", "status_value": "maintenance"} if type_ == "status" else {}
        if type_ == "fact":
            extra = {"key": "acme-billing"}
        stored = hashing_container.memory.store(MemoryDraft(
            type=MemoryType(type_), content=content, source_agent="claude-code", client_id="acme-corp", **extra))
        ids[content] = stored.memory.id
    return ids


def steps_for(container: Container, model: LanguageModel, **limits: int) -> ResearchSteps:
    settings = container.settings
    return ResearchSteps(container.memory, container.records, model, **{
        "retrieve_limit": settings.research_retrieve_limit, "synthesis_memories": settings.research_synthesis_memories,
        **limits})


def research(container: Container, model: LanguageModel, topic: str = "what replaced the caching approach?",
             max_iterations: int = 2, **limits: int) -> ResearchState:
    steps = steps_for(container, model, **limits)
    service = ResearchService(steps, InProcessResearchRunner(steps), enabled=True)
    return service.run(ResearchRequest(topic=topic, client_id="acme-corp", max_iterations=max_iterations))


def test_stops_as_soon_as_the_judge_says_sufficient(hashing_container: Container, corpus: dict[str, str]) -> None:
    model = ScriptedModel(judged("SUFFICIENT"), synthesis())
    state = research(hashing_container, model, max_iterations=4)
    assert state.iterations == 1 and not state.partial
    assert [schema for _, _, schema in model.prompts] == ["Judgement", "Synthesis"]
    assert [trace.query for trace in state.query_trace] == ["what replaced the caching approach?"]


def test_requeries_the_named_gap_until_the_budget_then_is_partial(
    hashing_container: Container, corpus: dict[str, str]
) -> None:
    model = ScriptedModel(judged("INSUFFICIENT", "API status", "maintenance mode"),
                          judged("INSUFFICIENT", "Redis shutdown date"), synthesis())
    state = research(hashing_container, model, max_iterations=2)
    assert state.iterations == 2 and state.partial
    assert [trace.query for trace in state.query_trace] == ["what replaced the caching approach?",
                                                            "API status; maintenance mode"]
    assert state.judgement is not None and state.judgement.missing == ["Redis shutdown date"]
    assert len(model.prompts) == 3  # two judgements, one synthesis: no third retrieval past the budget


def test_a_repeated_gap_query_ends_the_loop_before_the_budget(
    hashing_container: Container, corpus: dict[str, str]
) -> None:
    model = ScriptedModel(judged("INSUFFICIENT", "cache headers"), judged("INSUFFICIENT", "cache headers"),
                          synthesis())
    state = research(hashing_container, model, max_iterations=4)
    assert state.iterations == 2 and state.repeated_query and state.partial
    assert [schema for _, _, schema in model.prompts] == ["Judgement", "Judgement", "Synthesis"]


def test_insufficient_with_nothing_missing_ends_the_loop(hashing_container: Container, corpus: dict[str, str]) -> None:
    model = ScriptedModel(judged("INSUFFICIENT"), synthesis())
    state = research(hashing_container, model, max_iterations=3)
    assert state.iterations == 1 and state.repeated_query and state.partial


def test_rounds_add_memories_without_duplicates(hashing_container: Container, corpus: dict[str, str]) -> None:
    model = ScriptedModel(judged("INSUFFICIENT", "Redis caching approach"), judged("SUFFICIENT"), synthesis())
    state = research(hashing_container, model, topic="Redis caching approach replaced", max_iterations=2)
    first, second = state.query_trace
    assert len(state.memory_ids) == len(set(state.memory_ids)) == second.cumulative
    assert first.cumulative == first.retrieved and second.cumulative <= first.cumulative + second.retrieved
    assert set(state.memory_ids) <= set(corpus.values())
    assert not state.partial


def test_gap_query_is_the_missing_facts_joined_and_cut_to_400_chars() -> None:
    assert next_query(["API status ", "", " maintenance"]) == "API status; maintenance"
    long_query = next_query(["a" * 300, "b" * 300])
    assert len(long_query) == 400 and long_query.startswith("a" * 300 + "; b")


def test_the_judge_sees_every_memory_retrieved_so_far(hashing_container: Container, corpus: dict[str, str]) -> None:
    model = ScriptedModel(judged("INSUFFICIENT", "public API maintenance status"), judged("SUFFICIENT"), synthesis())
    state = research(hashing_container, model, topic="Redis caching approach", max_iterations=3)
    second_judge_prompt = model.prompts[1][1]
    assert MEMORY_LINE.findall(second_judge_prompt) == state.memory_ids
    assert "Question: Redis caching approach" in second_judge_prompt


def test_synthesis_sees_at_most_40_memories_and_keeps_only_their_citations(hashing_container: Container) -> None:
    stored = [hashing_container.memory.store(MemoryDraft(
        type=MemoryType.EVENT, content=f"Deployment note number {n} about the release train", source_agent="n8n",
    )).memory.id for n in range(45)]
    analysed, beyond = stored[:40], stored[40]
    model = ScriptedModel(synthesis(
        answer=f"The train ships weekly [mem:{analysed[3]}] [mem:{beyond}] [mem:invented-id].",
        findings=[f"Weekly cadence [mem:{analysed[3].upper()}, mem:{analysed[7]}]", f"Only unknown [mem:{beyond}]"],
    ))
    state = ResearchState(topic="release cadence", query="release cadence", iterations=3, memory_ids=stored,
                          judgement=judgement("SUFFICIENT"))
    result = steps_for(hashing_container, model).synthesize(state).result
    assert result is not None
    assert MEMORY_LINE.findall(model.prompts[0][1]) == analysed and result.memories_analyzed == 40
    assert result.answer == f"The train ships weekly [mem:{analysed[3]}]."
    assert result.key_findings == [f"Weekly cadence [mem:{analysed[3]}] [mem:{analysed[7]}]", "Only unknown"]
    assert result.cited_memory_ids == [analysed[3], analysed[7]]
    assert result.llm.model_dump() == {"provider": "scripted", "model": "script-1"}


def test_a_memory_deleted_between_rounds_drops_out(hashing_container: Container, corpus: dict[str, str]) -> None:
    steps = steps_for(hashing_container, ScriptedModel(synthesis()))
    state = steps.retrieve(ResearchState(topic="Redis caching", query="Redis caching approach"))
    gone = state.memory_ids[0]
    hashing_container.memory.delete(gone, by="claude-code", reason="wrong")
    result = steps.synthesize(state.model_copy(update={"judgement": judgement("SUFFICIENT")})).result
    assert result is not None and result.memories_analyzed == len(state.memory_ids) - 1


def test_the_state_survives_json_between_steps(hashing_container: Container, corpus: dict[str, str]) -> None:
    """What the state machine does between Task states: serialise, pass on, parse."""
    model = ScriptedModel(judged("INSUFFICIENT", "maintenance mode"), judged("SUFFICIENT"), synthesis())
    steps = steps_for(hashing_container, model)
    state = ResearchState.start(ResearchRequest(topic="cache replaced", max_iterations=3))
    for step in ("retrieve", "judge", "retrieve", "judge", "synthesize"):
        state = ResearchState.model_validate(json.loads(json.dumps(steps.run(step, state).model_dump(mode="json"))))
    assert state.result is not None and state.iterations == 2 and loop_is_done(state)


def test_an_unknown_step_is_refused(hashing_container: Container) -> None:
    with pytest.raises(ValueError, match="unknown research step 'reflect'"):
        steps_for(hashing_container, ScriptedModel()).run("reflect", ResearchState(topic="t", query="t"))


def test_an_invalid_llm_answer_stops_the_run(hashing_container: Container, corpus: dict[str, str]) -> None:
    with pytest.raises(LLMInvalidResponse):
        research(hashing_container, ScriptedModel({"invalid": True}))


def test_disabled_research_refuses_before_any_work(hashing_container: Container) -> None:
    model = ScriptedModel()
    steps = steps_for(hashing_container, model)
    service = ResearchService(steps, InProcessResearchRunner(steps), enabled=False)
    with pytest.raises(FeatureUnavailable, match="research_disabled"):
        service.run(ResearchRequest(topic="anything"))
    assert model.prompts == []


def test_request_limits() -> None:
    from pydantic import ValidationError

    assert ResearchRequest(topic="q").max_iterations == 2
    for bad in ({"topic": "q", "max_iterations": 5}, {"topic": "q", "max_iterations": 0}, {"topic": " "},
                {"topic": "x" * 1001}, {"topic": "q", "client_id": "bad client"},
                {"topic": "q", "max_iterations": 2.5}):
        with pytest.raises(ValidationError):
            ResearchRequest.model_validate(bad)
