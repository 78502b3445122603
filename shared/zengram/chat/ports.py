"""The chat layer's ports: one protocol per concern, each with the contract every adapter keeps (the suites in
`tests/contract/chat/` run each against SQLite and DynamoDB). They live beside `zengram.memory.ports` and follow it.

Timestamps are timezone-aware UTC. "Atomic" means all of a write or none of it, under concurrent callers.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from zengram.chat.domain.claims import Claim
from zengram.chat.domain.events import AuditEntry, MemoryEvent, NewMemoryEvent
from zengram.chat.domain.history import ChatSummary, NewMessage, StoredMessage
from zengram.chat.domain.learning import JobStatus, LearningJob
from zengram.chat.domain.memories import MemoryWrite, SubjectMemory
from zengram.chat.domain.policies import MemoryPolicy
from zengram.chat.domain.prompts import SystemPrompt
from zengram.chat.domain.providers import ProviderCall
from zengram.chat.domain.recalls import LearningOutcome, RecallEvent
from zengram.chat.domain.records import DataRecord, RecordSchema
from zengram.chat.domain.state import AgentState


@runtime_checkable
class SubjectMemoryStore(Protocol):
    """Subject memories, the source of truth (the search index is derived from them).

    Contract:
    - `create(memory, supersede)` is atomic: the memory is inserted and each of `supersede` (memories as read, each
      with `.superseded(memory.id, at)` applied by the caller) replaces its stored version, but only if that is still
      at the revision the caller read; one that changed meanwhile is left as it is (not superseded). It returns the
      stored memory and the ones actually superseded. When an *active* memory of the same (project, subject) has the
      same `text_hash`, nothing is written and that memory is returned as `duplicate` (exactly one wins among
      concurrent identical creates).
    - `get` reads one by id (deleted ones too); `save(memory, expected_revision)` replaces a memory only if it is
      still at `expected_revision` (else StaleRevision, nothing written).
    - `of_subject(project, subject, statuses, include_deleted, limit, offset)` is newest first (`created_at`, then id).
    - `active_of(project, subject, limit)` lists a subject's active memories (for versioning when the index is down).
    - `record_recall(ids, at)` adds one to `seen_count` per id occurrence and sets `last_seen_at`, losing no
      increment under concurrent callers; unknown ids are ignored.
    - Every write marks the memory pending for the index at its new revision (the outbox); `pending_index(limit)`
      lists pending ones, oldest change first; `mark_indexed(revisions)` clears the mark of each memory still at
      that revision (a later change stays pending).
    """

    def create(self, memory: SubjectMemory, supersede: Sequence[SubjectMemory]) -> MemoryWrite: ...

    def get(self, memory_id: str) -> SubjectMemory | None: ...

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, SubjectMemory]: ...

    def save(self, memory: SubjectMemory, expected_revision: int) -> SubjectMemory: ...

    def of_subject(self, project_id: str, subject_id: str, *, statuses: Sequence[str], include_deleted: bool,
                   limit: int, offset: int) -> list[SubjectMemory]: ...

    def active_of(self, project_id: str, subject_id: str, limit: int) -> list[SubjectMemory]: ...

    def record_recall(self, memory_ids: Sequence[str], at: datetime) -> None: ...

    def pending_index(self, limit: int) -> list[SubjectMemory]: ...

    def mark_indexed(self, revisions: Mapping[str, int]) -> None: ...

    def iter_all(self) -> Iterator[SubjectMemory]: ...


@runtime_checkable
class ChatHistoryStore(Protocol):
    """Every message of every chat, per (project, subject, chat).

    Contract:
    - `append(project, subject, chat, messages, at)` stores the messages in the given order, atomically as a group
      of indexes: each gets an index greater than every index the chat had, so concurrent appends to one chat never
      share an index or interleave within one call's group. Returns them as stored. The chat's summary counts them
      (`message_count`) and moves `last_message_at` to `at`; `created_at` is set by the first append.
    - `read(project, subject, chat, limit)` is the first `limit` messages by index; `recent(..., limit)` the last
      `limit`, also in index order.
    - `chats(project, subject, limit, offset)` lists summaries, most recently active first (then chat id).
    - `delete_chat` removes the messages and the summary and says whether the chat existed.
    """

    def append(self, project_id: str, subject_id: str, chat_id: str, messages: Sequence[NewMessage],
               at: datetime) -> list[StoredMessage]: ...

    def read(self, project_id: str, subject_id: str, chat_id: str, limit: int) -> list[StoredMessage]: ...

    def recent(self, project_id: str, subject_id: str, chat_id: str, limit: int) -> list[StoredMessage]: ...

    def chats(self, project_id: str, subject_id: str, limit: int, offset: int) -> list[ChatSummary]: ...

    def delete_chat(self, project_id: str, subject_id: str, chat_id: str) -> bool: ...


@runtime_checkable
class AgentStateStore(Protocol):
    """Key/value state per (project, subject).

    Contract:
    - `put` creates or replaces the value of a key (keeping the first `created_at`) and returns what is stored.
    - `get(..., now)` is None for an unknown key and for one whose `expires_at` is not after `now`;
      `list_live(project, subject, now)` lists the live ones by key.
    - `delete` removes a key and says whether a live one existed.
    """

    def put(self, state: AgentState) -> AgentState: ...

    def get(self, project_id: str, subject_id: str, key: str, now: datetime) -> AgentState | None: ...

    def list_live(self, project_id: str, subject_id: str, now: datetime) -> list[AgentState]: ...

    def delete(self, project_id: str, subject_id: str, key: str, now: datetime) -> bool: ...


@runtime_checkable
class ClaimStore(Protocol):
    """A subject's claims (zengram/chat/domain/claims.py derives what each slot holds from them).

    Contract:
    - `add(claim)` stores a new claim (Conflict when its id exists).
    - `get(project, claim_id)` reads one (None when unknown or of another project).
    - `of_subject(project, subject)` is every claim of the subject, retracted ones too, oldest first (`created_at`,
      then id).
    - `save(claim, expected_revision)` replaces a claim only if it is still at `expected_revision` (else
      StaleRevision, nothing written).
    """

    def add(self, claim: Claim) -> Claim: ...

    def get(self, project_id: str, claim_id: str) -> Claim | None: ...

    def of_subject(self, project_id: str, subject_id: str) -> list[Claim]: ...

    def save(self, claim: Claim, expected_revision: int) -> Claim: ...


@runtime_checkable
class RecordBase(Protocol):
    """Record schemas and their records, per project.

    Contract:
    - `put_schema` creates or replaces a schema by (project, type name), keeping the first `created_at`;
      `schema`/`schemas` read them (by type name).
    - `insert` stores a new record; `save(record, expected_revision)` replaces one only if still at that revision
      (else StaleRevision); `get` reads one of a type by id (deleted ones too).
    - `records(project, type)` yields every record of the type that is not deleted, oldest first.
    - Like subject memories, every write marks the record pending for the index (`pending_index`, `mark_indexed`).
    """

    def put_schema(self, schema: RecordSchema) -> RecordSchema: ...

    def schema(self, project_id: str, type_name: str) -> RecordSchema | None: ...

    def schemas(self, project_id: str) -> list[RecordSchema]: ...

    def insert(self, record: DataRecord) -> DataRecord: ...

    def get(self, project_id: str, type_name: str, record_id: str) -> DataRecord | None: ...

    def get_many(self, record_ids: Sequence[str]) -> dict[str, DataRecord]: ...

    def save(self, record: DataRecord, expected_revision: int) -> DataRecord: ...

    def records(self, project_id: str, type_name: str) -> Iterator[DataRecord]: ...

    def pending_index(self, limit: int) -> list[DataRecord]: ...

    def mark_indexed(self, revisions: Mapping[str, int]) -> None: ...

    def iter_all(self) -> Iterator[DataRecord]: ...


@runtime_checkable
class PromptStore(Protocol):
    """System prompts per project.

    Contract: `put` creates or replaces by id; `get` of an unknown id (or one of another project) is None;
    `of_project(project)` is every prompt of the project, oldest first (then id); `delete` says whether it existed.
    """

    def put(self, prompt: SystemPrompt) -> SystemPrompt: ...

    def get(self, project_id: str, prompt_id: str) -> SystemPrompt | None: ...

    def of_project(self, project_id: str) -> list[SystemPrompt]: ...

    def delete(self, project_id: str, prompt_id: str) -> bool: ...


@runtime_checkable
class MemoryPolicyStore(Protocol):
    """Memory policies per project; the contract of `PromptStore`."""

    def put(self, policy: MemoryPolicy) -> MemoryPolicy: ...

    def get(self, project_id: str, policy_id: str) -> MemoryPolicy | None: ...

    def of_project(self, project_id: str) -> list[MemoryPolicy]: ...

    def delete(self, project_id: str, policy_id: str) -> bool: ...


@runtime_checkable
class RecallEventStore(Protocol):
    """The trace of every completion.

    Contract:
    - `record(event)` stores an event (with one memory-recall row per injected memory, atomically).
    - `for_chat(project, chat, limit)` lists a chat's events oldest first; `latest(project, limit)` the project's
      newest first; `for_memory(project, memory, limit)` the events that injected a memory, newest first.
    - `set_learning(event_id, outcome)` replaces the event's `learning` (unknown ids are ignored); `get` reads one.
    """

    def record(self, event: RecallEvent) -> None: ...

    def get(self, event_id: str) -> RecallEvent | None: ...

    def for_chat(self, project_id: str, chat_id: str, limit: int) -> list[RecallEvent]: ...

    def latest(self, project_id: str, limit: int) -> list[RecallEvent]: ...

    def for_memory(self, project_id: str, memory_id: str, limit: int) -> list[RecallEvent]: ...

    def set_learning(self, event_id: str, outcome: LearningOutcome) -> None: ...


@runtime_checkable
class LearningJobStore(Protocol):
    """The learning queue's stored jobs: none is only in memory, so a restart loses nothing.

    Contract:
    - `put` creates or replaces a job by id; `get` reads one.
    - `claim(job_id, at, lease_seconds)` takes a due job (`LearningJob.is_due(at)`) in one conditional write,
      applying `claimed` and returning it; a job that is not due (or unknown) gives None. Among concurrent claims of
      one job exactly one wins.
    - `due(at, limit)` lists due jobs, the longest waiting first.
    - `jobs(project, chat_id, status, limit)` lists a project's jobs (optionally of one chat, one status), newest
      first.
    """

    def put(self, job: LearningJob) -> None: ...

    def get(self, job_id: str) -> LearningJob | None: ...

    def claim(self, job_id: str, at: datetime, lease_seconds: float) -> LearningJob | None: ...

    def due(self, at: datetime, limit: int) -> list[LearningJob]: ...

    def jobs(self, project_id: str, chat_id: str | None, status: JobStatus | None,
             limit: int) -> list[LearningJob]: ...


@runtime_checkable
class LearningDispatch(Protocol):
    """Hands a stored job to whatever runs it, without waiting (embedded: the worker's bounded queue; AWS: an
    asynchronous invocation). Contract: returns at once and never raises for a full queue or an unreachable
    runner: the job is stored, so the next sweep (`LearningService.run_due`) picks it up."""

    def dispatch(self, job_id: str) -> None: ...


@runtime_checkable
class ChatModel(Protocol):
    """An OpenAI-compatible chat-completions endpoint, called with the caller's provider key.

    Contract:
    - `complete(call, body)` POSTs `body` to `<call.base_url>/chat/completions` and returns the JSON answer.
    - `stream(...)` does the same with `stream: true` and yields each server-sent event's JSON (chunks), stopping at
      `[DONE]`; it raises before yielding anything when the provider refuses the request.
    - A provider refusal (4xx) raises `ProviderRefused` with its status and message; unreachable or 5xx raises
      `LLMUnavailable` (503) or `LLMInvalidResponse` (502). The key is sent as `Authorization: Bearer` and never
      logged, stored or put into an error message.
    """

    def complete(self, call: ProviderCall, body: Mapping[str, Any]) -> dict[str, Any]: ...

    def stream(self, call: ProviderCall, body: Mapping[str, Any]) -> Iterator[dict[str, Any]]: ...


@runtime_checkable
class MemoryEventLog(Protocol):
    """The memory event log of each (project, subject), durable and ordered.

    Contract:
    - `append(events)` records the events in the given order and returns them numbered: each event's `seq` is its
      (project, subject)'s previous largest `seq` + 1 (the first is 1), gap-free and unique under concurrent
      appenders (a reader that has seen `seq` n has seen every event up to n of that subject).
    - `since(project, subject, after, limit)` lists that subject's events with `seq` > `after`, oldest first, at
      most `limit`; never another project's or subject's.
    - `last(project, subject)` is that subject's largest `seq` so far (0 before its first event), pruned or not.
    - `prune(before)` removes events recorded before `before` (retention); the numbering never restarts.
    """

    def append(self, events: Sequence[NewMemoryEvent]) -> list[MemoryEvent]: ...

    def last(self, project_id: str, subject_id: str) -> int: ...

    def since(self, project_id: str, subject_id: str, after: int, limit: int) -> list[MemoryEvent]: ...

    def prune(self, before: datetime) -> int: ...


@runtime_checkable
class AuditLog(Protocol):
    """The request audit of each project.

    Contract:
    - `record(entry)` stores one row; `recent(project, limit, before, subject_id, session_id)` lists the project's
      rows by id, largest first (ids sort by time: `AuditEntry.id`), only those with an id below `before` when
      given, only that subject's or session's when given; never another project's.
    - `prune(before)` removes rows recorded before `before` (retention).
    """

    def record(self, entry: AuditEntry) -> None: ...

    def recent(self, project_id: str, limit: int, *, before: str | None = None, subject_id: str | None = None,
               session_id: str | None = None) -> list[AuditEntry]: ...

    def prune(self, before: datetime) -> int: ...
