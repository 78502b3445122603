"""`POST /chat/completions`: resolve the subject and chat, gather the context the `mnx` switches ask for, assemble
it in the spec's six-step order, call the provider with the caller's key, then log the exchange, record the
recall event and queue learning (which never blocks the reply)."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from zengram.chat.domain.assembly import Injected, InjectedRecord, assemble, state_json
from zengram.chat.domain.history import NewMessage, Role, StoredMessage
from zengram.chat.domain.learning import LearningJob, LearnMode
from zengram.chat.domain.policies import AppliedPolicy, PolicyChoice
from zengram.chat.domain.prompts import SystemPrompt, combined_text
from zengram.chat.domain.providers import Provider, ProviderCall, ProviderEndpoints
from zengram.chat.domain.recall_calibration import considered_view, recall_settings_named
from zengram.chat.domain.recalls import (
    HistoryUse,
    LearningOutcome,
    MemoryUse,
    PromptUse,
    RecallConfig,
    RecallEvent,
    RecordUse,
    StateUse,
)
from zengram.chat.domain.requests import ChatCompletionRequest, ChatMessageIn, MnxOptions
from zengram.chat.domain.state import AgentState
from zengram.chat.domain.tenancy import new_id, new_subject_id
from zengram.chat.domain.tokens import estimate_tokens, message_tokens
from zengram.chat.ports import ChatModel
from zengram.chat.services.history import ChatHistoryService
from zengram.chat.services.knowledge import SubjectKnowledge
from zengram.chat.services.learning import LearningService
from zengram.chat.services.memories import RecallHit, SubjectMemoryService
from zengram.chat.services.policies import MemoryPolicyService
from zengram.chat.services.prompts import PromptService
from zengram.chat.services.recalls import RecallService
from zengram.chat.services.records import RecordHit, RecordService
from zengram.chat.services.state import AgentStateService
from zengram.kernel.content import Scrubber
from zengram.kernel.errors import ZengramError
from zengram.kernel.outbox import describe_error
from zengram.kernel.ports import Clock

logger = logging.getLogger(__name__)
IGNORED_OPTIONS = ("summarize", "regenerate_key")  # accepted, not supported (docs/chat.md)


@dataclass(frozen=True)
class Caller:
    """Who asks, as the API resolved it: the project, the provider keys sent (for this request only)."""

    project_id: str
    keys: Mapping[Provider, str] = field(default_factory=dict, repr=False)
    memory_policy: str | None = None  # the x-mnx-memory-policy header
    request_id: str | None = None
    session_id: str | None = None  # the x-session-id header: kept in the logged messages' metadata


@dataclass
class Prepared:
    """A completion ready to send: where, what, and what to record afterwards."""

    request: ChatCompletionRequest
    caller: Caller
    subject_id: str
    chat_id: str
    call: ProviderCall
    body: dict[str, Any]
    event: RecallEvent
    recalled: list[str]  # memory ids injected, reinforced once the model answered
    policy: AppliedPolicy = field(default_factory=AppliedPolicy)  # the memory policy the request applies

    @property
    def options(self) -> MnxOptions:
        return self.request.options

    @property
    def headers(self) -> dict[str, str]:
        return {"x-mnx-chat-id": self.chat_id, "x-mnx-subject-id": self.subject_id}


@dataclass(frozen=True)
class Turn:
    """Where a completion goes: its subject and chat, and the provider call."""

    subject_id: str
    chat_id: str
    call: ProviderCall


@dataclass(frozen=True)
class Gathered:
    """The context gathered for one completion, before it is assembled into the messages."""

    prompts: list[SystemPrompt]
    states: list[AgentState]
    facts: dict[str, Any]  # claim slot → current value
    memories: list[RecallHit]
    records: list[RecordHit]
    history: list[StoredMessage]
    notes: dict[str, Any]  # what could not be recalled, and why (the trace's options)

    def injected(self) -> Injected:
        """The context as the assembly injects it: texts, state values, record data, replayed messages."""
        return Injected(
            prompt=combined_text(self.prompts),
            state={state.key: state.value for state in self.states} or None,
            facts=self.facts or None,
            memories=[hit.memory.text for hit in self.memories],
            records=[InjectedRecord(hit.record.type_name, hit.record.record_id, hit.record.data)
                     for hit in self.records],
            history=[message.as_prompt_message() for message in self.history])

    def prompt_uses(self) -> list[PromptUse]:
        return [PromptUse(id=p.id, name=p.name, scope=p.scope.value, tokens=estimate_tokens(p.prompt_text))
                for p in self.prompts]

    def state_uses(self) -> list[StateUse]:
        return [StateUse(key=s.key, tokens=estimate_tokens(state_json({s.key: s.value}))) for s in self.states]

    def memory_uses(self) -> list[MemoryUse]:
        return [MemoryUse(memory_id=hit.memory.id, text=hit.memory.text, score=hit.score, relevance=hit.relevance,
                          tokens=estimate_tokens(hit.memory.text)) for hit in self.memories]

    def record_uses(self) -> list[RecordUse]:
        return [RecordUse(record_id=hit.record.record_id, type_name=hit.record.type_name, score=hit.similarity,
                          tokens=estimate_tokens(json.dumps(hit.record.data))) for hit in self.records]

    def history_use(self) -> HistoryUse:
        return HistoryUse(message_indexes=[m.index for m in self.history], tokens=sum(m.tokens for m in self.history))


@dataclass(frozen=True)
class ContextSources:
    """Where a completion's context comes from: the subject's memories, the chat's history, the agent's state, the
    project's records and prompts, and the recall log."""

    memories: SubjectMemoryService
    history: ChatHistoryService
    state: AgentStateService
    records: RecordService
    prompts: PromptService
    recalls: RecallService
    knowledge: SubjectKnowledge | None = None  # the subject's claims and profile, when the host has them
    policies: MemoryPolicyService | None = None  # memory policies, when the host has them


class CompletionService:
    def __init__(self, model: ChatModel, endpoints: ProviderEndpoints, sources: ContextSources, *,
                 learning: LearningService, clock: Clock, scrubber: Scrubber, config: RecallConfig) -> None:
        self._model = model
        self._endpoints = endpoints
        self._memories = sources.memories
        self._history = sources.history
        self._state = sources.state
        self._records = sources.records
        self._prompts = sources.prompts
        self._recalls = sources.recalls
        self._learning = learning
        self._clock = clock
        self._scrubber = scrubber
        self._config = config
        self._knowledge = sources.knowledge
        self._policies = sources.policies

    # -- before the model ------------------------------------------------------------------------------------

    def prepare(self, request: ChatCompletionRequest, caller: Caller) -> Prepared:
        """Everything a completion needs before the provider is called: the subject and chat (new ids when the
        request names none), the provider call (its endpoint, the caller's key), the context the `mnx` switches
        ask for, the body with that context assembled into the messages, and the recall event to record once
        the model answered. A missing provider key, an unknown prompt id or an unknown table raise here."""
        options = request.options
        subject_id = options.subject_id or new_subject_id()
        chat_id = options.chat_id or str(uuid.uuid4())
        call = self._endpoints.call_for(request.model, caller.keys, options.provider)
        policy = self._policy_for(caller, subject_id, chat_id, options)
        turn = Turn(subject_id, chat_id, call)
        gathered = self._gather(request, turn, caller.project_id, policy)
        body = _body(request, call, gathered)
        event = self._event(request, caller, turn, gathered)
        return Prepared(request, caller, subject_id, chat_id, call, body, event,
                        [hit.memory.id for hit in gathered.memories], policy)

    def _policy_for(self, caller: Caller, subject_id: str, chat_id: str, options: MnxOptions) -> AppliedPolicy:
        """The memory policy `mnx.memory_policy` (else the header) chooses (an unknown policy id: NotFound)."""
        if self._policies is None:
            return AppliedPolicy()
        choice = PolicyChoice.of(options.memory_policy, caller.memory_policy)
        return self._policies.for_request(caller.project_id, subject_id, chat_id, choice)

    def _gather(self, request: ChatCompletionRequest, turn: Turn, project: str, policy: AppliedPolicy) -> Gathered:
        """The context the `mnx` switches ask for, in this order: the system prompts, the agent state, with recall
        on the truth of the subject's claims and the memories and records recalled by the last user message, the
        chat's history. Recall that fails (the index down) is noted, and the completion goes on without it."""
        options = request.options
        subject_id, chat_id = turn.subject_id, turn.chat_id
        notes: dict[str, Any] = {"memory_policy_applied": policy.policy_ids} if policy.policy_ids else {}
        query = _query_of(request.messages)
        prompts = self._prompts_for(project, subject_id, chat_id, options)
        states = self._state.load(project, subject_id, options.state_options.key) \
            if options.state_options.load else []
        wants_facts = options.recall or options.profile  # `profile: true` loads the fields without recall
        facts = self._knowledge.facts(project, subject_id) if wants_facts and self._knowledge else {}
        memories = self._recall(project, subject_id, query, policy, notes) if options.recall else []
        records = self._records_for(project, subject_id, query, options, notes) \
            if options.records_options.recall else []
        history = self._history.replay(project, subject_id, chat_id) if options.history else []
        return Gathered(prompts, states, facts, memories, records, history, notes)

    def _event(self, request: ChatCompletionRequest, caller: Caller, turn: Turn, gathered: Gathered) -> RecallEvent:
        """The recall event of this completion: what was injected and what it cost in tokens, and the options
        as applied (with what could not be recalled, and why)."""
        call = turn.call
        return RecallEvent(
            id=new_id("rcl"), project_id=caller.project_id, subject_id=turn.subject_id, chat_id=turn.chat_id,
            request_id=caller.request_id, provider=call.provider.value, model=call.model, stream=request.stream,
            prompts=gathered.prompt_uses(), state=gathered.state_uses(), memories=gathered.memory_uses(),
            records=gathered.record_uses(), history=gathered.history_use(),
            message_tokens=sum(message_tokens(m.text()) for m in request.messages),
            options=self._options_view(request.options, caller, gathered.notes), created_at=self._clock.now())

    def _prompts_for(self, project: str, subject_id: str, chat_id: str, options: MnxOptions) -> list[SystemPrompt]:
        choice = options.system_prompt
        if choice is False:
            return []
        if choice is True:
            return self._prompts.resolve(project, subject_id, chat_id)
        return [self._prompts.get(project, choice)]  # a prompt id: that prompt (NotFound when unknown)

    def _recall(self, project: str, subject_id: str, query: str, policy: AppliedPolicy,
                notes: dict[str, Any]) -> list[RecallHit]:
        """The memories recall injects: as many and as relevant as the policy says (else the settings), the
        subject's private ones unless the policy says `recall_private: false`."""
        config = policy.config
        limit = config.recall_limit if config.recall_limit is not None else self._config.memories
        if not query.strip() or limit == 0:
            return []
        relevance = config.recall_min_relevance if config.recall_min_relevance is not None \
            else self._config.memory_relevance
        try:
            recalled = self._memories.recall(project, subject_id, query, limit=limit, min_relevance=relevance,
                                             include_private=config.recall_private is not False,
                                             named=recall_settings_named(config))
        except ZengramError as error:  # the index is down: answer without memories, and say so in the trace
            notes["recall_error"] = describe_error(error)
            return []
        notes["memories_considered"] = considered_view(recalled.considered, cutoff=relevance, limit=limit)
        return recalled.hits

    def _records_for(self, project: str, subject_id: str, query: str, options: MnxOptions,
                     notes: dict[str, Any]) -> list[RecordHit]:
        tables = options.records_options.tables
        if tables is not None:
            for name in tables:
                self._records.schema(project, name)  # an unknown table is the caller's mistake: 404 now
        if not query.strip():
            return []
        try:
            hits, considered = self._records.recall_considering(project, subject_id, query, tables,
                                                                limit=self._config.records,
                                                                min_similarity=self._config.record_similarity)
        except ZengramError as error:
            notes["records_error"] = describe_error(error)
            return []
        notes["records_considered"] = considered_view(considered, cutoff=self._config.record_similarity,
                                                      limit=self._config.records)
        return hits

    @staticmethod
    def _options_view(options: MnxOptions, caller: Caller, notes: dict[str, Any]) -> dict[str, Any]:
        view = options.model_dump(mode="json", include={"log", "learn", "recall", "history", "system_prompt",
                                                        "state", "records", "memory_policy", "provider"})
        if caller.memory_policy is not None and options.memory_policy is None:
            view["memory_policy"] = caller.memory_policy
        ignored = [name for name in IGNORED_OPTIONS if getattr(options, name)]
        if ignored:
            view["unsupported"] = ignored
        return {**view, **notes}

    # -- the model -------------------------------------------------------------------------------------------

    def complete(self, prepared: Prepared) -> dict[str, Any]:
        """The provider's answer with the layer's `mnx` block."""
        answer = self._model.complete(prepared.call, prepared.body)
        choices = answer.get("choices") or [{}]
        reply = ((choices[0] or {}).get("message") or {}).get("content") if isinstance(choices[0], dict) else None
        mnx = self._finish(prepared, reply if isinstance(reply, str) else "")
        return {**answer, "mnx": mnx}

    def stream(self, prepared: Prepared) -> Iterator[str]:
        """Server-sent events, chunks as the provider sends them, `[DONE]` last (`relay`)."""
        chunks = self.relay(prepared)

        def events() -> Iterator[str]:
            for chunk in chunks:
                yield f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"
            yield "data: [DONE]\n\n"

        return events()

    def relay(self, prepared: Prepared) -> Iterator[dict[str, Any]]:
        """The provider's chunks as it sends them. The stream is opened here (a refusal raises before anything is
        sent); when the provider breaks off, one last `{"error": {"message": …}}` chunk says so; the exchange is
        recorded once the chunks ran out, before the iterator ends."""
        chunks = self._model.stream(prepared.call, prepared.body)

        def relayed() -> Iterator[dict[str, Any]]:
            said: list[str] = []
            try:
                for chunk in chunks:
                    said.append(_delta_text(chunk))
                    yield chunk
            except ZengramError as error:  # the provider broke off: tell the client in-band, keep what was said
                logger.warning("provider stream broke off: %s", error)
                yield {"error": {"message": str(error)}}
            self._finish(prepared, "".join(said))

        return relayed()

    # -- after the model -------------------------------------------------------------------------------------

    def _finish(self, prepared: Prepared, reply: str) -> dict[str, Any]:
        """Logs the exchange, reinforces what was recalled, records the event and queues learning; returns the
        reply's `mnx` block."""
        now = self._clock.now()
        if prepared.options.log:
            self._log_exchange(prepared, reply, now)
        self._memories.reinforce(prepared.recalled, recalled_by=(prepared.caller.project_id, prepared.subject_id,
                                                                 prepared.chat_id))
        job = self._learning_job(prepared, reply)
        skipped = self._learning_skipped(prepared.options) if job is None else None
        self._recalls.record(prepared.event.model_copy(update={"learning": skipped}))
        mnx: dict[str, Any] = {"chat_id": prepared.chat_id, "subject_id": prepared.subject_id,
                               "event_id": prepared.event.id}
        if job is not None:
            mnx.update(self._queue_learning(job, prepared.options))
        elif skipped is not None:
            mnx["learning"] = skipped.model_dump(mode="json", include={"status", "error"})
        return mnx

    def _log_exchange(self, prepared: Prepared, reply: str, now: datetime) -> None:
        """Appends the request's messages (but the system's) and the reply to the chat's history."""
        metadata = dict(prepared.options.metadata or {})
        if prepared.caller.session_id is not None:
            metadata.setdefault("session_id", prepared.caller.session_id)
        said = [NewMessage(role=Role(m.role), content=m.text(), name=m.name, tool_call_id=m.tool_call_id,
                           metadata=metadata) for m in prepared.request.messages if m.role not in _SYSTEM_ROLES]
        self._history.append(prepared.caller.project_id, prepared.subject_id, prepared.chat_id,
                             [*said, NewMessage(role=Role.ASSISTANT, content=reply, metadata=metadata)], now)

    def _learning_skipped(self, options: MnxOptions) -> LearningOutcome | None:
        """The learning outcome of a turn that asked to learn with no language model to learn with, else None."""
        if (options.learn or options.records_options.learn) and not self._learning.available:
            return LearningOutcome(status="skipped", error="no language model configured for learning "
                                                           "(ZENGRAM_LLM_BASE_URL or ZENGRAM_LLM_API_KEY)")
        return None

    def _queue_learning(self, job: LearningJob, options: MnxOptions) -> dict[str, Any]:
        """Queues the turn's learning job, or runs it now when the caller asked to wait for record learning;
        returns the `mnx` fields saying so."""
        sync = options.records_options.sync and job.records is not None
        self._learning.enqueue(job, dispatch=not sync)
        answer: dict[str, Any] = {}
        if sync:  # the caller asked to wait for record learning: this turn's job runs now
            ran = self._learning.run(job.id)
            answer["records"] = (ran or job).report().model_dump(mode="json")
        answer["learning"] = {"job_id": job.id, "status": "done" if sync else "pending"}
        return answer

    def _learning_job(self, prepared: Prepared, reply: str) -> LearningJob | None:
        options = prepared.options
        memories = None if options.learn is False else LearnMode.FORCE if options.learn == "force" else LearnMode.AUTO
        learn_records = options.records_options.learn
        records = LearnMode(learn_records) if learn_records else None
        if (memories is None and records is None) or not self._learning.available:
            return None
        exchange = [{"role": m.role.value, "content": self._scrubber.scrub(m.text())}
                    for m in prepared.request.messages if m.role not in _SYSTEM_ROLES and m.text()]
        exchange.append({"role": Role.ASSISTANT.value, "content": self._scrubber.scrub(reply)})
        now = self._clock.now()
        return LearningJob(id=new_id("job"), project_id=prepared.caller.project_id, subject_id=prepared.subject_id,
                           chat_id=prepared.chat_id, event_id=prepared.event.id, memories=memories, records=records,
                           tables=options.records_options.tables, messages=exchange, not_before=now, created_at=now,
                           updated_at=now, policy=prepared.policy if prepared.policy.policy_ids else None)


_SYSTEM_ROLES = (Role.SYSTEM, Role.DEVELOPER)


def _query_of(messages: list[ChatMessageIn]) -> str:
    """What recall searches by: the last user message (else the last message)."""
    for message in reversed(messages):
        if message.role is Role.USER:
            return message.text()
    return messages[-1].text() if messages else ""


def _body(request: ChatCompletionRequest, call: ProviderCall, gathered: Gathered) -> dict[str, Any]:
    """The provider's request body: the caller's passthrough fields, the provider's model name, and the
    messages with the gathered context assembled in (the spec's six-step order)."""
    messages = [message.model_dump(exclude_none=True) for message in request.messages]
    return {**request.passthrough(), "model": call.model, "messages": assemble(messages, gathered.injected()),
            "stream": request.stream}


def _delta_text(chunk: Mapping[str, Any]) -> str:
    choices = chunk.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return ""
    content = (choices[0].get("delta") or {}).get("content")
    return content if isinstance(content, str) else ""

