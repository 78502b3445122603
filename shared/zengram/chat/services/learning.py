"""Learning from conversations, off the reply's path: jobs are stored, handed to a worker, extracted with the
deployment's language model, versioned into memories (and upserted into records), retried when they fail.

The caller's provider key is never used here: it is for its request only and is never stored, so a job that
outlives the request (a retry, a restart) runs on the deployment's own model (ZENGRAM_LLM_*).
"""

from __future__ import annotations

import logging
import re

from zengram.chat.domain.claims import LEARNED_SOURCE, SLOT_PATTERN, ClaimCreate
from zengram.chat.domain.learning import (
    ExtractedClaim,
    ExtractedMemories,
    ExtractedMemory,
    ExtractedRecords,
    JobStatus,
    LearningConfig,
    LearningJob,
    LearnMode,
    memory_prompt,
    record_prompt,
)
from zengram.chat.domain.memories import MemoryKind, MemorySource
from zengram.chat.domain.policies import PolicyConfig
from zengram.chat.domain.recalls import LearningOutcome
from zengram.chat.ports import LearningDispatch, LearningJobStore
from zengram.chat.services.claims import ClaimService
from zengram.chat.services.memories import NewMemory, SubjectMemoryService
from zengram.chat.services.recalls import RecallService
from zengram.chat.services.records import RecordService
from zengram.kernel.errors import Conflict, NotFound
from zengram.kernel.outbox import describe_error
from zengram.kernel.ports import Clock, LanguageModel

logger = logging.getLogger(__name__)
KNOWN_RECORDS = 10  # existing records shown to the extraction, so it can update them
_SLOT = re.compile(SLOT_PATTERN)


class LearningService:
    def __init__(self, jobs: LearningJobStore, memories: SubjectMemoryService, records: RecordService,
                 recalls: RecallService, llm: LanguageModel, clock: Clock, config: LearningConfig,
                 claims: ClaimService | None = None) -> None:
        self._jobs = jobs
        self._memories = memories
        self._records = records
        self._recalls = recalls
        self._llm = llm
        self._clock = clock
        self._config = config
        self._dispatch: LearningDispatch | None = None
        self._claims = claims

    def attach(self, dispatch: LearningDispatch) -> None:
        """The runner jobs are handed to (the host builds it around this service)."""
        self._dispatch = dispatch

    @property
    def available(self) -> bool:
        """Whether a language model is configured to extract with."""
        return self._llm.provider != "none"

    def enqueue(self, job: LearningJob, *, dispatch: bool = True) -> LearningJob:
        """Stores the job (so nothing is lost), reports it pending, and hands it over without waiting."""
        self._jobs.put(job)
        self._recalls.report_learning(job.event_id, job.report())
        if dispatch and self._dispatch is not None:
            try:
                self._dispatch.dispatch(job.id)
            except Exception:  # stored: the next sweep runs it
                logger.exception("learning job %s could not be handed over; the sweep will run it", job.id)
        return job

    def run(self, job_id: str) -> LearningJob | None:
        """Claims and runs one job if it is due; None when it is not (another worker has it, or it is done)."""
        job = self._jobs.claim(job_id, self._clock.now(), self._config.lease.total_seconds())
        if job is None:
            return None
        self._recalls.report_learning(job.event_id, job.report())
        try:
            outcome = self._execute(job)
        except Exception as error:
            logger.warning("learning job %s failed (attempt %d of %d): %s", job.id, job.attempts,
                           self._config.max_attempts, describe_error(error))
            ended = job.failed(describe_error(error), self._clock.now(), max_attempts=self._config.max_attempts,
                               retry_after=self._config.retry_after)
        else:
            ended = job.finished(outcome, self._clock.now())
        self._jobs.put(ended)
        self._recalls.report_learning(ended.event_id, ended.report())
        return ended

    def run_due(self, limit: int = 20) -> int:
        """Runs the jobs that are due (new ones a full queue left behind, retries, abandoned ones); returns how many
        ran."""
        ran = 0
        for job in self._jobs.due(self._clock.now(), limit):
            if self.run(job.id) is not None:
                ran += 1
        return ran

    def jobs(self, project_id: str, chat_id: str | None, status: JobStatus | None, limit: int) -> list[LearningJob]:
        return self._jobs.jobs(project_id, chat_id, status, limit)

    def retry(self, project_id: str, job_id: str) -> LearningJob:
        """A failed job gets a fresh set of attempts."""
        job = self._jobs.get(job_id)
        if job is None or job.project_id != project_id:
            raise NotFound(f"learning job {job_id} not found")
        if job.status is not JobStatus.FAILED:
            raise Conflict(f"learning job {job_id} is {job.status.value}: only a failed job is retried")
        return self.enqueue(job.requeued(self._clock.now()))

    # -- one job ---------------------------------------------------------------------------------------------

    def _execute(self, job: LearningJob) -> LearningOutcome:
        outcome = LearningOutcome(status=JobStatus.DONE.value)
        if job.memories is not None:
            outcome = self._learn_memories(job, job.memories, outcome)
        if job.records is not None:
            outcome = self._learn_records(job, job.records, outcome)
        return outcome

    def _learn_memories(self, job: LearningJob, mode: LearnMode, outcome: LearningOutcome) -> LearningOutcome:
        system, user = memory_prompt(job.messages, mode, job.policy.policy_text if job.policy else "")
        answer = self._llm.complete_json(system, user, ExtractedMemories)
        extracted = answer.memories
        if not extracted and mode is LearnMode.FORCE:  # "force" always keeps something: the user's own words
            said = [m["content"] for m in job.messages if m["role"] == "user" and m["content"].strip()]
            extracted = [ExtractedMemory(text=said[-1][:2000], kind=MemoryKind.NOTE, confidence=0.5)] if said else []
        kept, filtered = _by_policy(extracted, job.policy.config if job.policy else PolicyConfig())
        created, skipped, superseded = list(outcome.created), list(outcome.skipped), list(outcome.superseded)
        made: dict[int, str] = {}  # index in `extracted` → the memory made of it
        for index, memory in kept:
            result = self._memories.create(job.project_id, NewMemory(
                subject_id=job.subject_id, text=memory.text, kind=memory.kind, visibility=memory.visibility,
                importance=memory.importance, confidence=memory.confidence, is_temporal=memory.is_temporal,
                source=MemorySource.INFERRED, chat_id=job.chat_id))
            if result.memory is not None:
                created.append(result.memory.id)
                made[index] = result.memory.id
                superseded += [old.id for old in result.superseded]
            elif result.duplicate_of is not None:
                skipped.append({"text": memory.text, "reason": "duplicate", "duplicate_of": result.duplicate_of.id,
                                "similarity": result.similarity})
        claims = self._learn_claims(job, answer.claims, made, skipped)
        return outcome.model_copy(update={"created": created, "skipped": skipped, "superseded": superseded,
                                          "claims": claims, "filtered": filtered})

    def _learn_claims(self, job: LearningJob, named: list[ExtractedClaim], made: dict[int, str],
                      skipped: list[dict[str, object]]) -> list[str]:
        """Asserts each claim the model named (each supersedes its slot's value); returns their ids. A slot name
        the claims do not take is skipped, visibly."""
        if self._claims is None:
            return []
        asserted = []
        for claim in named:
            if not _SLOT.match(claim.slot):
                skipped.append({"slot": claim.slot[:128], "reason": "invalid slot name"})
                continue
            memory_id = made.get(claim.memory) if claim.memory is not None else None
            stored, _ = self._claims.create(job.project_id, ClaimCreate(
                subject_id=job.subject_id, slot=claim.slot, value=claim.value, confidence=claim.confidence,
                source=LEARNED_SOURCE, claim_type=LEARNED_SOURCE, source_memory_id=memory_id))
            asserted.append(stored.id)
        return asserted

    def _learn_records(self, job: LearningJob, mode: LearnMode, outcome: LearningOutcome) -> LearningOutcome:
        schemas = [schema for schema in self._records.schemas(job.project_id)
                   if job.tables is None or schema.type_name in job.tables]
        if not schemas:
            return outcome
        said = " ".join(m["content"] for m in job.messages if m["role"] == "user")
        known = self._records.recall(job.project_id, job.subject_id, said or "records", [s.type_name for s in schemas],
                                     limit=KNOWN_RECORDS, min_similarity=0.0) if said else []
        system, user = record_prompt(job.messages, [schema.describe() for schema in schemas],
                                     [{"record_id": hit.record.record_id, "type_name": hit.record.type_name,
                                       "data": hit.record.data} for hit in known], mode)
        extracted = self._llm.complete_json(system, user, ExtractedRecords).records
        learned = self._records.upsert_learned(job.project_id, job.subject_id, extracted, job.tables)
        return outcome.model_copy(update={"records": learned.written, "records_refused": learned.refused})


def _by_policy(extracted: list[ExtractedMemory], config: PolicyConfig
               ) -> tuple[list[tuple[int, ExtractedMemory]], list[dict[str, object]]]:
    """The extracted memories the policy keeps (with their indexes), the most important first up to
    `max_memories_per_turn`, and those it drops, with why."""
    kept: list[tuple[int, ExtractedMemory]] = []
    dropped: list[dict[str, object]] = []
    for index, memory in enumerate(extracted):
        reason = config.keeps(memory.kind.value, memory.confidence, memory.importance)
        if reason is None:
            kept.append((index, memory))
        else:
            dropped.append({"text": memory.text, "reason": reason})
    cap = config.max_memories_per_turn
    if cap is not None and len(kept) > cap:
        ranked = sorted(kept, key=lambda pair: (-pair[1].importance, pair[0]))
        dropped += [{"text": m.text, "reason": f"over max_memories_per_turn {cap}"} for _, m in ranked[cap:]]
        kept = sorted(ranked[:cap], key=lambda pair: pair[0])
    return kept, dropped
