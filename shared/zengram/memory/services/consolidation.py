"""Consolidation runs (semantics.md "Consolidation (LLM)"): one at a time under a lock with an expiry, each run a
job record; per client, batches of unconsolidated memories go to the LLM and its plan is applied batch by batch.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from pydantic import ValidationError

from zengram.kernel.content import content_hash
from zengram.kernel.errors import (
    Conflict,
    FeatureUnavailable,
    LLMUnavailable,
    NotFound,
    StaleRevision,
    ZengramError,
)
from zengram.kernel.ports import Clock, Embedder, LanguageModel, SearchIndex
from zengram.kernel.search import SearchFilters
from zengram.memory.domain.consolidation import (
    CONSOLIDATION,
    SYSTEM_PROMPT,
    ConsolidationPlan,
    MergedFact,
    Summary,
    batch_prompt,
    client_batches,
    keep_known_ids,
)
from zengram.memory.domain.jobs import Job, JobStatus, JobTrigger, LockState
from zengram.memory.domain.models import Category, Importance, KnowledgeCategory, Memory, MemoryType, WriteKind
from zengram.memory.domain.requests import MemoryDraft, MemoryPatch
from zengram.memory.ports import ConsolidationWrites, JobLauncher, JobStore, RecordStore
from zengram.memory.services.memory import MemoryService

logger = logging.getLogger(__name__)

EXPIRING_LEVELS = (Importance.LOW, Importance.MEDIUM)
_EXPIRY_PAGE = 500
_EXPIRY_PAGES = 20  # at most 10,000 expiries per run; the rest go next run
_NEAREST = 5  # index hits checked for a near-duplicate (the record store decides which are still active)
_STALE_ATTEMPTS = 5  # writes of one member's connections/category when the memory keeps changing under it


class AlreadyRunning(Conflict):
    def __init__(self) -> None:
        super().__init__("consolidation already running")


@dataclass(frozen=True)
class ConsolidationConfig:
    """The consolidation settings (their defaults are Settings')."""

    enabled: bool
    interval: str
    batch_size: int
    max_batches: int
    similarity: float
    event_ttl: timedelta
    lock_seconds: float


@dataclass(frozen=True)
class ConsolidationStores:
    """Where consolidation reads and writes, all beside the records: the memories, its own writes, the jobs and lock."""

    records: RecordStore
    writes: ConsolidationWrites
    jobs: JobStore


@dataclass(frozen=True)
class ConsolidationStatus:
    is_running: bool
    last_run_at: datetime | None
    llm_provider: str
    llm_model: str
    enabled: bool
    interval: str
    last_job_id: str | None = None  # the run that finished last (its details: GET /consolidate/job/{id}, admin)


@dataclass
class RunSummary:
    """What a run did; stored as the job's `result` (also when it failed part-way: completed batches stay)."""

    memories_considered: int = 0
    batches: int = 0
    clients: list[str] = field(default_factory=list)
    merged: int = 0
    superseded: int = 0
    skipped_duplicates: int = 0
    contradictions: int = 0
    connections: int = 0
    summaries: int = 0
    categorized: int = 0
    consolidated: int = 0
    expired: int = 0


class ConsolidationService:
    def __init__(self, stores: ConsolidationStores, memory: MemoryService, index: SearchIndex, embedder: Embedder,
                 llm: LanguageModel, clock: Clock, launcher: JobLauncher, config: ConsolidationConfig) -> None:
        self._store = stores.records
        self._writes = stores.writes
        self._jobs = stores.jobs
        self._memory = memory
        self._index = index
        self._embedder = embedder
        self._llm = llm
        self._clock = clock
        self._launcher = launcher
        self._config = config

    # -- jobs -----------------------------------------------------------------------------------------

    def start(self, *, trigger: JobTrigger = JobTrigger.API) -> Job:
        """Takes the lock (AlreadyRunning, 409, when another run holds it) and records a queued job; `run`
        does the work. No LLM provider → LLMUnavailable (503) before anything is written."""
        if self._llm.provider == "none":
            raise LLMUnavailable.not_configured("consolidation")
        now = self._clock.now()
        job = Job(id=str(uuid.uuid4()), kind=CONSOLIDATION, trigger=trigger, created_at=now)
        previous = self._jobs.read_lock(CONSOLIDATION)
        if not self._jobs.acquire(CONSOLIDATION, job.id, self._config.lock_seconds, now):
            raise AlreadyRunning()
        try:
            if previous is not None:
                self._fail_abandoned(previous, now)
            self._jobs.put(job)
        except BaseException:
            self._jobs.release(CONSOLIDATION, job.id)
            raise
        return job

    def start_in_background(self) -> Job:
        """`start`, then hands the job to the launcher (a thread, or another Lambda invocation)."""
        job = self.start()
        try:
            self._launcher.launch(job.id, self.run)
        except Exception as error:
            logger.exception("could not launch consolidation job %s", job.id)
            self._finish(job, JobStatus.FAILED, RunSummary(), f"could not start the job: {error}")
            raise FeatureUnavailable(f"consolidation could not be started: {error}") from error
        return job

    def run_now(self, *, trigger: JobTrigger = JobTrigger.API, raise_errors: bool = False) -> Job:
        """`start` and `run` in this thread (`?sync=true`, and the schedule)."""
        return self.run(self.start(trigger=trigger).id, raise_errors=raise_errors)

    def run_scheduled(self) -> Job | None:
        """The schedule's tick: a run, unless consolidation is off, has no LLM, or a run is going on (None)."""
        if not self._config.enabled or self._llm.provider == "none":
            logger.info("scheduled consolidation skipped: %s",
                        "disabled" if not self._config.enabled else "no LLM provider")
            return None
        try:
            return self.run_now(trigger=JobTrigger.SCHEDULE)
        except AlreadyRunning:
            logger.info("scheduled consolidation skipped: a run is going on")
            return None

    def run(self, job_id: str, *, raise_errors: bool = False) -> Job:
        """Runs a queued job that holds the lock; records its outcome and releases the lock. The job is first
        claimed (queued → running, one conditional write): a repeated delivery of the same job (Lambda async
        invocations are at-least-once), while it runs or after it finished, loses the claim and returns the job
        as stored without doing anything. `raise_errors`: a run that fails with a domain error (e.g.
        LLMInvalidResponse 502) raises it once the failure is recorded."""
        job = self.job(job_id)
        if job.status.finished:
            return job
        claimed = self._jobs.claim(job.id, self._clock.now())
        if claimed is None:
            logger.info("consolidation job %s is already %s: this delivery does nothing", job.id,
                        self.job(job_id).status.value)
            return self.job(job_id)
        job, summary = claimed, RunSummary()
        if not self._jobs.acquire(CONSOLIDATION, job.id, self._config.lock_seconds, self._clock.now()):
            return self._finish(job, JobStatus.FAILED, summary, "the lock was lost before the run began")
        try:
            self._consolidate(job, summary)
        except ZengramError as error:
            failed = self._finish(job, JobStatus.FAILED, summary, str(error))
            if raise_errors:
                raise
            return failed
        except Exception as error:
            logger.exception("consolidation job %s failed", job.id)
            return self._finish(job, JobStatus.FAILED, summary, f"internal error: {type(error).__name__}")
        return self._finish(job, JobStatus.SUCCEEDED, summary, None)

    def job(self, job_id: str) -> Job:
        job = self._jobs.get(job_id)
        if job is None or job.kind != CONSOLIDATION:
            raise NotFound(f"job {job_id} not found")
        return job

    def status(self) -> ConsolidationStatus:
        lock = self._jobs.read_lock(CONSOLIDATION)
        last = self._jobs.last_finished(CONSOLIDATION)
        return ConsolidationStatus(
            is_running=lock is not None and lock.held_at(self._clock.now()),
            last_run_at=last.finished_at if last else None,
            llm_provider=self._llm.provider, llm_model=self._llm.model,
            enabled=self._config.enabled, interval=self._config.interval,
            last_job_id=last.id if last else None,
        )

    def _finish(self, job: Job, status: JobStatus, summary: RunSummary, error: str | None) -> Job:
        finished = job.model_copy(update={"status": status, "finished_at": self._clock.now(),
                                          "result": asdict(summary), "error": error})
        try:
            self._jobs.put(finished)
        finally:
            self._jobs.release(CONSOLIDATION, job.id)
        return finished

    def _fail_abandoned(self, previous: LockState, now: datetime) -> None:
        """The lock we just took had expired: its run died without finishing. Its job says so from now on."""
        abandoned = self._jobs.get(previous.owner)
        if abandoned is not None and not abandoned.status.finished:
            self._jobs.put(abandoned.model_copy(update={
                "status": JobStatus.FAILED, "finished_at": now,
                "error": "the run stopped without finishing (its lock expired)"}))

    def _renew_lock(self, job: Job) -> None:
        if not self._jobs.acquire(CONSOLIDATION, job.id, self._config.lock_seconds, self._clock.now()):
            raise AlreadyRunning()  # the lock expired and another run took over: stop here

    # -- the algorithm --------------------------------------------------------------------------------

    def _consolidate(self, job: Job, summary: RunSummary) -> None:
        summary.expired = self._expire_old_events()
        limit = self._config.batch_size * self._config.max_batches
        candidates = self._writes.unconsolidated(limit)
        summary.memories_considered = len(candidates)
        for client_id, batch in client_batches(candidates, self._config.batch_size):
            plan = self._llm.complete_json(SYSTEM_PROMPT, batch_prompt(client_id, batch), ConsolidationPlan)
            self._apply(job, client_id, batch, keep_known_ids(plan, batch), summary)
            summary.batches += 1
            if client_id not in summary.clients:
                summary.clients.append(client_id)
            self._renew_lock(job)

    def _expire_old_events(self) -> int:
        now = self._clock.now()
        cutoff = now - self._config.event_ttl
        reason = f"expired by consolidation: a low/medium event older than {self._config.event_ttl.days} days, " \
                 "never accessed"
        total = 0
        for _ in range(_EXPIRY_PAGES):
            expired = self._writes.expire_events(cutoff, EXPIRING_LEVELS, CONSOLIDATION, reason, now, _EXPIRY_PAGE)
            self._memory.after_change(expired)  # as a DELETE: unlinked from the entity registry, then the index
            total += len(expired)
            if len(expired) < _EXPIRY_PAGE:
                break
        return total

    def _apply(self, job: Job, client_id: str, batch: Sequence[Memory], plan: ConsolidationPlan,
               summary: RunSummary) -> None:
        """Applies one validated plan: merged facts (sources superseded), contradictions, summaries,
        connections and categories; then every memory of the batch, and what it produced, is consolidated."""
        produced: list[str] = []
        for fact in plan.merged_facts:
            merged = self._store_product(job, client_id, fact.content, summary, fact=fact)
            if merged is None:
                continue
            produced.append(merged.id)
            summary.merged += 1
            if merged.client_id == client_id:  # never retire one client's memories for another's
                retired = self._writes.supersede_by(fact.source_ids, merged.id, self._clock.now())
                self._memory.index_sync.refresh_attributes(retired)
                summary.superseded += sum(1 for memory in retired if memory.superseded_by == merged.id)
                summary.consolidated += len(retired)
        for contradiction in plan.contradictions:
            event = self._store_draft(job, client_id, MemoryDraft(
                type=MemoryType.EVENT, content=contradiction.description, source_agent=CONSOLIDATION,
                client_id=client_id, importance=Importance.HIGH,
                metadata=_provenance(job, "contradiction", contradiction.memory_ids)))
            if event is not None:
                produced.append(event.id)
                summary.contradictions += 1
        for item in plan.summaries:
            stored = self._store_product(job, client_id, item.content, summary, summary_of=item)
            if stored is not None:
                produced.append(stored.id)
                summary.summaries += 1
        summary.connections += self._annotate(batch, plan, summary)
        consolidated = self._writes.mark_consolidated([m.id for m in batch] + produced, self._clock.now())
        self._memory.index_sync.refresh_attributes(consolidated)
        summary.consolidated += len(consolidated)

    def _store_product(self, job: Job, client_id: str, content: str, summary: RunSummary, *,
                       fact: MergedFact | None = None, summary_of: Summary | None = None) -> Memory | None:
        """Stores a merged fact or a summary as a fact, unless the client already holds it: the same content
        hash (any type), or an active memory at cosine ≥ the similarity setting."""
        if self._already_known(client_id, content):
            summary.skipped_duplicates += 1
            return None
        sources = fact.source_ids if fact else summary_of.memory_ids if summary_of else []
        draft_fields: dict[str, Any] = {"key": fact.key, "importance": fact.importance,
                                        "knowledge_category": fact.knowledge_category} if fact else {}
        try:
            draft = MemoryDraft(type=MemoryType.FACT, content=content, source_agent=CONSOLIDATION,
                                client_id=client_id, category=Category.SEMANTIC,
                                metadata=_provenance(job, "merged_fact" if fact else "summary", sources),
                                **draft_fields)
        except ValidationError as error:
            logger.warning("consolidation job %s: proposed memory refused: %s", job.id, error.errors()[:1])
            return None
        return self._store_draft(job, client_id, draft)

    def _store_draft(self, job: Job, client_id: str, draft: MemoryDraft) -> Memory | None:
        result = self._memory.store(draft)
        if result.kind is not WriteKind.CREATED:  # the same text from consolidation exists: nothing new
            return None
        return result.memory

    def _already_known(self, client_id: str, content: str) -> bool:
        digest = content_hash(self._memory.scrubber.scrub(content))
        if any(self._store.find_active_duplicate(client_id, type_.value, digest) for type_ in MemoryType):
            return True
        self._memory.index_sync.ensure_compatible()  # another model's vectors would make every cosine meaningless
        vector = self._embedder.embed([content])[0]
        hits = self._index.vector_search(vector, SearchFilters(client_id=client_id), _NEAREST)
        close = [hit.id for hit in hits if hit.score >= self._config.similarity]
        live = self._store.get_many(close)  # the index may lag: only a memory still active counts
        return any(memory.active and memory.client_id == client_id for memory in live.values())

    def _annotate(self, batch: Sequence[Memory], plan: ConsolidationPlan, summary: RunSummary) -> int:
        """Writes connections (into each member's metadata, `connections`) and knowledge categories."""
        by_id = {memory.id: memory for memory in batch}
        links: dict[str, list[dict[str, str]]] = {}
        for connection in plan.connections:
            for member in connection.memory_ids:
                links.setdefault(member, []).extend(
                    {"memory_id": other, "relation": connection.relation}
                    for other in connection.memory_ids if other != member)
        categories = {item.memory_id: item.knowledge_category for item in plan.categories
                      if by_id[item.memory_id].knowledge_category != item.knowledge_category}
        for memory_id in dict.fromkeys([*links, *categories]):
            summary.categorized += self._annotate_one(by_id[memory_id], links.get(memory_id),
                                                      categories.get(memory_id))
        return len(plan.connections)

    def _annotate_one(self, read: Memory, links: list[dict[str, str]] | None,
                      category: KnowledgeCategory | None) -> bool:
        """One member's connections and category, written only if the memory is still at the revision the change
        was computed from. When it changed meanwhile (a PATCH during the LLM call, or this run's own supersede),
        the change is computed again from a fresh read, a bounded number of times, so nothing written meanwhile
        is lost; a category someone set meanwhile wins over the model's. Returns whether the category was set."""
        memory = read
        for _ in range(_STALE_ATTEMPTS):
            wanted = category if memory.knowledge_category == read.knowledge_category else None
            metadata = None
            if links is not None:
                known = memory.metadata.get("connections", [])
                metadata = {**memory.metadata, "connections": [*known, *(link for link in links if link not in known)]}
            if metadata is None and wanted is None:
                return False
            try:
                self._memory.update(memory.id, MemoryPatch(knowledge_category=wanted, metadata=metadata),
                                    expected_revision=memory.revision)
                return wanted is not None
            except StaleRevision:
                fresh = self._store.get(memory.id)
                if fresh is None:
                    return False
                memory = fresh
            except (ZengramError, ValidationError) as error:  # deleted meanwhile, or metadata over its limits
                logger.info("consolidation left memory %s as it was: %s", memory.id, error)
                return False
        logger.info("consolidation left memory %s as it was: it kept changing", read.id)
        return False


def _provenance(job: Job, kind: str, memory_ids: Sequence[str]) -> dict[str, Any]:
    return {"consolidation": {"kind": kind, "job_id": job.id, "memory_ids": list(memory_ids)}}
