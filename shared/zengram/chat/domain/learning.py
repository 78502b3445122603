"""Learning: after a completion has answered, an LLM extracts memories (and records) from the exchange.

A job is stored before anything runs it, so none is lost to a crash or a full queue; a failed attempt is retried
later, and after its last attempt the job stays `failed` with its error, visible until someone retries it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from zengram.chat.domain.claims import PROFILE_FIELDS
from zengram.chat.domain.job_status import JobStatus as JobStatus  # its own module (the routes need only it)
from zengram.chat.domain.memories import MemoryKind, Visibility
from zengram.chat.domain.policies import AppliedPolicy
from zengram.chat.domain.recalls import LearningOutcome
from zengram.kernel.timestamps import format_timestamp

MAX_ERROR_CHARS = 500


@dataclass(frozen=True)
class LearningConfig:
    max_attempts: int = 3
    retry_after: timedelta = timedelta(seconds=30)  # doubling per failed attempt
    lease: timedelta = timedelta(minutes=5)  # a claimed job whose worker vanished is due again after this


class LearnMode(StrEnum):
    AUTO = "auto"  # the LLM decides whether anything is worth keeping
    FORCE = "force"  # something is always kept


class LearningJob(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    project_id: str
    subject_id: str
    chat_id: str
    event_id: str  # the recall event whose `learning` this job reports into
    memories: LearnMode | None = None
    records: LearnMode | None = None
    tables: list[str] | None = None  # record schemas to extract into (None: every schema of the project)
    messages: list[dict[str, str]]  # the exchange, scrubbed: [{"role": …, "content": …}]
    policy: AppliedPolicy | None = None  # the memory policy the request applied (None: none)
    status: JobStatus = JobStatus.PENDING
    attempts: int = 0
    last_error: str | None = None
    not_before: datetime
    lease_until: datetime | None = None
    outcome: LearningOutcome | None = None
    created_at: datetime
    updated_at: datetime

    @field_serializer("not_before", "lease_until", "created_at", "updated_at", when_used="json")
    def _timestamp_text(self, moment: datetime | None) -> str | None:
        return format_timestamp(moment) if moment is not None else None

    def is_due(self, now: datetime) -> bool:
        """Pending and its time has come, or running with a lease that ran out (its worker died)."""
        if self.status is JobStatus.PENDING:
            return self.not_before <= now
        return self.status is JobStatus.RUNNING and self.lease_until is not None and self.lease_until <= now

    def claimed(self, at: datetime, lease: timedelta) -> LearningJob:
        return self.model_copy(update={"status": JobStatus.RUNNING, "attempts": self.attempts + 1,
                                       "lease_until": at + lease, "updated_at": at})

    def finished(self, outcome: LearningOutcome, at: datetime) -> LearningJob:
        return self.model_copy(update={"status": JobStatus.DONE, "outcome": outcome, "last_error": None,
                                       "lease_until": None, "updated_at": at})

    def failed(self, error: str, at: datetime, *, max_attempts: int, retry_after: timedelta) -> LearningJob:
        """Back to pending for another attempt after `retry_after` (doubling per attempt), or failed for good."""
        final = self.attempts >= max_attempts
        return self.model_copy(update={
            "status": JobStatus.FAILED if final else JobStatus.PENDING, "last_error": error[:MAX_ERROR_CHARS],
            "lease_until": None, "updated_at": at,
            "not_before": at if final else at + retry_after * (2 ** max(self.attempts - 1, 0)),
        })

    def requeued(self, at: datetime) -> LearningJob:
        """A failed job given a fresh set of attempts."""
        return self.model_copy(update={"status": JobStatus.PENDING, "attempts": 0, "not_before": at,
                                       "lease_until": None, "updated_at": at})

    def report(self) -> LearningOutcome:
        """The job as its recall event shows it."""
        base = self.outcome or LearningOutcome(status=self.status.value)
        return base.model_copy(update={"status": self.status.value, "job_id": self.id, "attempts": self.attempts,
                                       "error": self.last_error})


# -- what the LLM is asked, and what it must answer -------------------------------------------------------------

class ExtractedMemory(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str = Field(min_length=1, max_length=2000)
    kind: MemoryKind = MemoryKind.FACT
    importance: int = Field(default=50, ge=0, le=100)
    confidence: float = Field(default=0.8, ge=0, le=1)
    is_temporal: bool = False
    visibility: Visibility = Visibility.PRIVATE


class ExtractedClaim(BaseModel):
    """A slot-keyed fact the model names (`home_city = "Porto"`); `memory` is the index of the extracted memory it
    comes from, if any."""

    model_config = ConfigDict(extra="ignore")

    slot: str = Field(min_length=1, max_length=128)
    value: str | int | float | bool | list[Any] | dict[str, Any]
    confidence: float = Field(default=0.8, ge=0, le=1)
    memory: int | None = None


class ExtractedMemories(BaseModel):
    model_config = ConfigDict(extra="ignore")

    memories: list[ExtractedMemory] = Field(default_factory=list, max_length=20)
    claims: list[ExtractedClaim] = Field(default_factory=list, max_length=20)


class ExtractedRecord(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type_name: str
    data: dict[str, Any]
    record_id: str | None = None  # an existing record to update


class ExtractedRecords(BaseModel):
    model_config = ConfigDict(extra="ignore")

    records: list[ExtractedRecord] = Field(default_factory=list, max_length=20)


MEMORY_SYSTEM = """You extract long-term memories about the user from a conversation.
A memory is a short, self-contained statement in the third person ("User prefers dark mode"), worth knowing in
future conversations: facts about the user, preferences, ongoing context, notes. Ignore small talk and anything
the assistant said that the user did not confirm. Answer with JSON only:
{"memories": [{"text": "...", "kind": "fact|preference|context|note", "importance": 0-100, "confidence": 0-1,
"is_temporal": true|false}],
 "claims": [{"slot": "snake_case_name", "value": "...", "confidence": 0-1, "memory": index of the memory it is from}]}
A claim is one current value the user states about themselves that fits a named slot (""" + \
    ", ".join(PROFILE_FIELDS) + """, home_city, employer, …); leave "claims" empty when the user states none."""
FORCE_NOTE = "\nThe caller asked to always learn: return at least one memory summarising what the user said."
POLICY_NOTE = "\nThe application's memory policy (follow it when choosing what to keep):\n"


def memory_prompt(messages: Sequence[dict[str, str]], mode: LearnMode, policy_text: str = "") -> tuple[str, str]:
    """(system, user) for memory extraction; `policy_text` is the request's memory policy, if any."""
    system = MEMORY_SYSTEM + (FORCE_NOTE if mode is LearnMode.FORCE else "")
    if policy_text:
        system += POLICY_NOTE + policy_text
    return system, "Conversation:\n" + _transcript(messages)


RECORD_SYSTEM = """You extract structured records from a conversation into the schemas below.
Only record what the conversation states; never invent values. To update a known record, give its record_id.
Answer with JSON only: {"records": [{"type_name": "...", "data": {...}, "record_id": "optional"}]}
Schemas:
"""


def record_prompt(messages: Sequence[dict[str, str]], schemas: Sequence[str], known: Sequence[dict[str, Any]],
                  mode: LearnMode) -> tuple[str, str]:
    """(system, user) for record extraction; `schemas` described by `RecordSchema.describe`, `known` the records
    that could be updated."""
    system = RECORD_SYSTEM + "\n".join(schemas)
    if mode is LearnMode.FORCE:
        system += "\nThe caller asked to always learn: return at least one record if any schema fits."
    known_part = ("Known records:\n" + "\n".join(json.dumps(record, ensure_ascii=False) for record in known) + "\n\n"
                  if known else "")
    return system, known_part + "Conversation:\n" + _transcript(messages)


def _transcript(messages: Sequence[dict[str, str]]) -> str:
    return "\n".join(f"{message['role']}: {message['content']}" for message in messages)
