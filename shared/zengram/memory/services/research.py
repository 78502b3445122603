"""Research (POST /research): iterate-until-sufficient retrieval, then a grounded synthesis (semantics.md).

The loop is three steps over a JSON `ResearchState`: Retrieve (fused search, ids added without duplicates),
Judge (the LLM drafts an answer and names what is missing), and, once `loop_is_done`, Synthesize. A
`ResearchRunner` drives them: `InProcessResearchRunner` calls them in a loop (embedded host); the Step Functions
runner executes `infra/statemachines/research.asl.json`, whose Task states call the same steps in a Lambda.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from zengram.kernel.errors import FeatureDisabled
from zengram.kernel.keys import TenantScope
from zengram.kernel.ports import LanguageModel
from zengram.memory.domain.citations import CitationChecker
from zengram.memory.domain.llm import LLMInfo, memory_line
from zengram.memory.domain.models import Memory
from zengram.memory.domain.requests import SearchRequest
from zengram.memory.domain.research import (
    Judgement,
    QueryTrace,
    ResearchRequest,
    ResearchResult,
    ResearchState,
    Synthesis,
    loop_is_done,
    next_query,
)
from zengram.memory.ports import RecordStore, ResearchRunner
from zengram.memory.services.memory import MemoryService

DISABLED_CODE = "research_disabled"
DISABLED_MESSAGE = "POST /research is disabled. Set RESEARCH_ENABLED=true to enable agentic multi-hop retrieval."

JUDGE_SYSTEM = """You judge whether a set of memories answers a multi-hop question.
Answer only with a JSON object: {"draft": string, "status": "SUFFICIENT" | "INSUFFICIENT", "reason": string,
"missing": [string]}.
- draft: your best answer from these memories alone, each claim followed by its [mem:<id>] citations.
- status: SUFFICIENT only when every part of the question is answered by the memories.
- missing: when INSUFFICIENT, short search queries for the facts still missing (empty when SUFFICIENT)."""

SYNTHESIS_SYSTEM = """You answer a multi-hop question from the memories given, and from nothing else.
Answer only with a JSON object: {"answer": string, "key_findings": [string], "unresolved": [string]}.
- End every claim in answer and key_findings with the [mem:<id>] citations of the memories that support it;
  cite only ids listed in the memories.
- unresolved: the parts of the question the memories do not settle."""


class ResearchSteps:
    """The three steps of the loop. Each takes a state and returns the next one; memories are re-read from
    the record store by id, so a state stays small enough for a Step Functions payload."""

    def __init__(
        self,
        memory: MemoryService,
        records: RecordStore,
        llm: LanguageModel,
        *,
        retrieve_limit: int,
        synthesis_memories: int,
    ) -> None:
        self._memory = memory
        self._store = records
        self._llm = llm
        self._retrieve_limit = retrieve_limit
        self._synthesis_memories = synthesis_memories

    def run(self, step: str, state: ResearchState) -> ResearchState:
        """Runs the step named `retrieve`, `judge` or `synthesize` (the Lambda's dispatch)."""
        steps: dict[str, Callable[[ResearchState], ResearchState]] = {
            "retrieve": self.retrieve, "judge": self.judge, "synthesize": self.synthesize,
        }
        if step not in steps:
            raise ValueError(f"unknown research step {step!r}; expected one of {sorted(steps)}")
        return steps[step](state)

    def retrieve(self, state: ResearchState) -> ResearchState:
        """One round: fused search for `state.query`, new ids appended in rank order."""
        result = self._memory.search_once(
            SearchRequest(q=state.query, client_id=state.client_id, limit=self._retrieve_limit),
            TenantScope.of(state.client_ids),
        )
        found = [hit.memory.id for hit in result.hits]
        known = set(state.memory_ids)
        memory_ids = [*state.memory_ids, *(memory_id for memory_id in found if memory_id not in known)]
        trace = QueryTrace(query=state.query, retrieved=len(found), cumulative=len(memory_ids))
        return state.model_copy(update={
            "iterations": state.iterations + 1, "memory_ids": memory_ids,
            "query_trace": [*state.query_trace, trace],
        })

    def judge(self, state: ResearchState) -> ResearchState:
        """Asks whether the memories so far suffice; sets the gap query and whether it was already run."""
        memories = self._read(state.memory_ids)
        judgement = self._llm.complete_json(JUDGE_SYSTEM, _prompt(state.topic, memories), Judgement)
        query = next_query(judgement.missing)
        already_run = {trace.query for trace in state.query_trace}
        return state.model_copy(update={
            "judgement": judgement, "query": query, "repeated_query": not query or query in already_run,
        })

    def synthesize(self, state: ResearchState) -> ResearchState:
        """The grounded answer from the first `synthesis_memories` memories retrieved (the topic's own hits
        come first); citations of any other id are stripped."""
        memories = self._read(state.memory_ids)[: self._synthesis_memories]
        synthesis = self._llm.complete_json(SYNTHESIS_SYSTEM, _prompt(state.topic, memories), Synthesis)
        citations = CitationChecker(memory.id for memory in memories)
        answer = citations.clean(synthesis.answer)
        findings = citations.clean_all(synthesis.key_findings)
        unresolved = citations.clean_all(synthesis.unresolved)
        result = ResearchResult(
            answer=answer, key_findings=findings, unresolved=unresolved,
            cited_memory_ids=citations.cited_ids([answer, *findings, *unresolved]), memories_analyzed=len(memories),
            llm=LLMInfo(provider=self._llm.provider, model=self._llm.model),
        )
        return state.model_copy(update={"result": result})

    def _read(self, memory_ids: Sequence[str]) -> list[Memory]:
        """The memories still readable (a deleted one drops out), in the order they were retrieved."""
        found = self._store.get_many(list(memory_ids))
        return [found[i] for i in memory_ids if i in found and not found[i].is_deleted]


class InProcessResearchRunner:
    """The embedded host's `ResearchRunner`: the same loop as the state machine, as a Python loop."""

    def __init__(self, steps: ResearchSteps) -> None:
        self._steps = steps

    def run(self, state: ResearchState) -> ResearchState:
        while True:
            state = self._steps.judge(self._steps.retrieve(state))
            if loop_is_done(state):
                return self._steps.synthesize(state)


class ResearchService:
    """POST /research: off unless enabled, then the loop through whichever runner the host wired."""

    def __init__(self, steps: ResearchSteps, runner: ResearchRunner, *, enabled: bool) -> None:
        self.steps = steps
        self._runner = runner
        self._enabled = enabled

    def ensure_enabled(self) -> None:
        if not self._enabled:
            raise FeatureDisabled(DISABLED_CODE, DISABLED_MESSAGE)

    def run(self, request: ResearchRequest, scope: TenantScope = TenantScope.EVERYONE) -> ResearchState:
        """The finished state: `result` holds the synthesis; trace, judgement and counters the loop. Only
        memories of `scope`'s clients are retrieved (the scope travels in the state, to every step)."""
        self.ensure_enabled()
        if request.client_id is not None:
            scope.require(request.client_id)
        return self._runner.run(ResearchState.start(request, scope.sorted_clients()))


def _prompt(topic: str, memories: Sequence[Memory]) -> str:
    lines = [f"Question: {topic}", "", f"Memories ({len(memories)}):"]
    lines += [memory_line(memory) for memory in memories] or ["(none found)"]
    return "\n".join(lines)

