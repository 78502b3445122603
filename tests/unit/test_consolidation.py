"""The consolidation algorithm (semantics.md "Consolidation (LLM)") over a real SQLite store and embedded index, with
the real OpenAI SDK talking to the scripted chat server: merges, supersedes, duplicate skips, contradictions,
invented ids, per-client batches, expiry, failures, and the lock."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from zengram.assembly.containers import Container, build_container
from zengram.assembly.provider import ContainerProvider
from zengram.embedded.app import consolidation_schedule
from zengram.embedded.scheduler import PeriodicTask
from zengram.kernel.errors import FeatureUnavailable, LLMUnavailable
from zengram.kernel.ports import JsonModel, LanguageModel
from zengram.memory.domain.consolidation import ConsolidationPlan, MergedFact, keep_known_ids, schedule_interval
from zengram.memory.domain.jobs import Job, JobStatus
from zengram.memory.domain.models import Importance, KnowledgeCategory, Memory, MemoryType, RecordQuery
from zengram.memory.domain.requests import MemoryDraft, MemoryPatch
from zengram.memory.services.consolidation import AlreadyRunning, ConsolidationService
from zengram.memory.wiring import build_consolidation_service
from zengram.settings import Settings

from tests.llm_server import ScriptedLLMServer
from tests.support import HashingEmbedder, TickingClock, pending_index


@pytest.fixture
def brain(llm_settings: Settings, clock: TickingClock) -> Iterator[Container]:
    built = build_container(llm_settings, embedder=HashingEmbedder(), clock=clock)
    yield built
    built.close()


def remember(brain: Container, content: str, *, client_id: str = "acme", **fields: Any) -> Memory:
    fields.setdefault("type", MemoryType.EVENT)
    return brain.memory.store(MemoryDraft(content=content, source_agent="claude-code", client_id=client_id,
                                          **fields)).memory


def reread(brain: Container, memory: Memory) -> Memory:
    return brain.memory.get(memory.id)


def asked(server: ScriptedLLMServer, number: int = 0) -> dict[str, Any]:
    """The batch the LLM was given in request `number`."""
    body: dict[str, Any] = json.loads(server.requests[number]["messages"][-1]["content"])
    return body


def empty_plan() -> dict[str, Any]:
    return {"merged_facts": [], "contradictions": [], "connections": [], "summaries": [], "categories": []}


def test_a_merged_fact_replaces_its_sources(brain: Container, llm_server: ScriptedLLMServer) -> None:
    # Given two facts saying the same thing in different words, and an event
    first = remember(brain, "Acme's site runs Next.js 14", type=MemoryType.FACT, key="acme-site")
    second = remember(brain, "The Acme frontend uses the App Router", type=MemoryType.FACT)
    meeting = remember(brain, "Kickoff call with Acme's marketing lead")
    llm_server.script({**empty_plan(),
                       "merged_facts": [{"content": "Acme's frontend is Next.js 14 with the App Router",
                                         "key": "acme-frontend", "importance": "high",
                                         "knowledge_category": "technical",
                                         "source_ids": [first.id, second.id, "invented-id"]}],
                       "connections": [{"memory_ids": [meeting.id, first.id, "made-up"], "relation": "same project"}],
                       "categories": [{"memory_id": meeting.id, "knowledge_category": "meeting"},
                                      {"memory_id": "ghost", "knowledge_category": "brand"}]})

    # When consolidation runs
    job = brain.consolidation.run_now()

    # Then the LLM saw the client's three memories
    assert job.status is JobStatus.SUCCEEDED, job.error
    assert asked(llm_server)["client_id"] == "acme"
    assert {row["id"] for row in asked(llm_server)["memories"]} == {first.id, second.id, meeting.id}
    # ...the merged fact is stored, consolidated, with its real sources only
    merged = brain.memory.query(RecordQuery(type=MemoryType.FACT, key="acme-frontend"))
    assert len(merged) == 1
    fact = merged[0]
    assert (fact.source_agent, fact.importance, fact.consolidated, fact.client_id) == (
        "consolidation", Importance.HIGH, True, "acme")
    assert fact.metadata["consolidation"]["memory_ids"] == [first.id, second.id]
    # ...its sources are superseded by it and consolidated
    for source in (first, second):
        after = reread(brain, source)
        assert (after.active, after.superseded_by, after.consolidated) == (False, fact.id, True)
    # ...the event is consolidated, categorised and connected (invented ids left out)
    event = reread(brain, meeting)
    assert event.consolidated and event.knowledge_category is not None and event.knowledge_category.value == "meeting"
    assert event.metadata["connections"] == [{"memory_id": first.id, "relation": "same project"}]
    assert job.result | {"clients": None} == job.result | {
        "memories_considered": 3, "batches": 1, "merged": 1, "superseded": 2, "connections": 1, "categorized": 1,
        "skipped_duplicates": 0, "contradictions": 0, "summaries": 0, "expired": 0, "clients": None}
    # ...every change reached the search index (nothing left pending for the repair sweep)
    assert pending_index(brain) == []
    # ...the superseded sources left normal search, the merged fact is found
    assert brain.index.count() >= 4
    hits = brain.memory.search(_search("Next.js App Router frontend"))
    assert [hit.memory.id for hit in hits.hits][:1] == [fact.id]
    assert {first.id, second.id}.isdisjoint(hit.memory.id for hit in hits.hits)


def _search(q: str) -> Any:
    from zengram.memory.domain.requests import SearchRequest

    return SearchRequest(q=q, client_id="acme")


def test_a_second_run_has_nothing_left_to_send(brain: Container, llm_server: ScriptedLLMServer) -> None:
    remember(brain, "Acme renewed the contract")
    llm_server.script(empty_plan())
    assert brain.consolidation.run_now().status is JobStatus.SUCCEEDED
    again = brain.consolidation.run_now()  # the server has no reply left: asking it would fail the job
    assert again.status is JobStatus.SUCCEEDED, again.error
    assert again.result["batches"] == 0 and len(llm_server.requests) == 1


def test_merged_facts_matching_by_hash_or_cosine_are_skipped(brain: Container, llm_server: ScriptedLLMServer) -> None:
    # Given a memory, and a plan proposing its exact text and the same words reordered (cosine 1, other hash)
    source = remember(brain, "Acme deploys every Friday afternoon")
    llm_server.script({**empty_plan(), "merged_facts": [
        {"content": "Acme deploys every Friday afternoon", "source_ids": [source.id]},
        {"content": "every Friday afternoon Acme deploys", "source_ids": [source.id]},
    ]})
    job = brain.consolidation.run_now()
    assert job.status is JobStatus.SUCCEEDED, job.error
    # Then neither is stored and the source stays active (consolidated)
    assert (job.result["skipped_duplicates"], job.result["merged"]) == (2, 0)
    after = reread(brain, source)
    assert after.active and after.consolidated
    assert brain.memory.query(RecordQuery(source_agent="consolidation", include_inactive=True)) == []


def test_a_merged_fact_far_from_everything_is_stored(brain: Container, llm_server: ScriptedLLMServer) -> None:
    # The same setup with genuinely new wording: the cosine check must not skip it
    source = remember(brain, "Acme deploys every Friday afternoon")
    llm_server.script({**empty_plan(), "merged_facts": [
        {"content": "Release cadence: weekly, end of week", "source_ids": [source.id]}]})
    job = brain.consolidation.run_now()
    assert (job.result["skipped_duplicates"], job.result["merged"], job.result["superseded"]) == (0, 1, 1)
    assert not reread(brain, source).active


def test_contradictions_become_high_importance_events(brain: Container, llm_server: ScriptedLLMServer) -> None:
    blue = remember(brain, "Acme's brand colour is blue", type=MemoryType.FACT, key="acme-colour-a")
    green = remember(brain, "Acme's brand colour is green", type=MemoryType.FACT, key="acme-colour-b")
    llm_server.script({**empty_plan(), "contradictions": [
        {"description": "Acme's brand colour is recorded as both blue and green", "memory_ids": [blue.id, green.id]},
        {"description": "Two memories nobody stored disagree", "memory_ids": ["nope-1", "nope-2"]},
    ]})
    job = brain.consolidation.run_now()
    assert job.result["contradictions"] == 1
    events = brain.memory.query(RecordQuery(type=MemoryType.EVENT, source_agent="consolidation"))
    assert [(e.content, e.importance, e.client_id, e.consolidated) for e in events] == [
        ("Acme's brand colour is recorded as both blue and green", Importance.HIGH, "acme", True)]
    assert events[0].metadata["consolidation"]["memory_ids"] == [blue.id, green.id]
    assert reread(brain, blue).active and reread(brain, green).active  # a contradiction retires nothing


def test_summaries_are_stored_as_consolidated_facts(brain: Container, llm_server: ScriptedLLMServer) -> None:
    standups = [remember(brain, f"Standup {day}: the Acme migration is on track") for day in ("Mon", "Tue")]
    llm_server.script({**empty_plan(), "summaries": [
        {"content": "Acme migration status meetings all reported it on track",
         "memory_ids": [m.id for m in standups]}]})
    job = brain.consolidation.run_now()
    assert job.result["summaries"] == 1
    stored = brain.memory.query(RecordQuery(type=MemoryType.FACT, source_agent="consolidation"))
    assert len(stored) == 1 and stored[0].consolidated and stored[0].metadata["consolidation"]["kind"] == "summary"
    assert all(reread(brain, m).active for m in standups)


def test_batches_are_per_client_and_never_mix_tenants(
    llm_settings: Settings, clock: TickingClock, llm_server: ScriptedLLMServer,
) -> None:
    brain = build_container(llm_settings.model_copy(update={"consolidation_batch_size": 2}),
                            embedder=HashingEmbedder(), clock=clock)
    try:
        acme = [remember(brain, f"Acme note {n}") for n in range(3)]
        globex = remember(brain, "Globex note", client_id="globex")
        # a plan for the globex batch naming acme memories: foreign ids are ignored like invented ones
        llm_server.script(empty_plan(), empty_plan(), {**empty_plan(), "merged_facts": [
            {"content": "Globex and Acme share a supplier", "source_ids": [acme[0].id, acme[1].id]}]})
        job = brain.consolidation.run_now()
        assert job.status is JobStatus.SUCCEEDED, job.error
        batches = [asked(llm_server, number) for number in range(3)]
        assert [(b["client_id"], len(b["memories"])) for b in batches] == [("acme", 2), ("acme", 1), ("globex", 1)]
        assert batches[2]["memories"][0]["id"] == globex.id
        assert job.result["merged"] == 0 and all(reread(brain, m).active for m in acme)
    finally:
        brain.close()


def test_an_llm_failure_fails_the_job_and_leaves_that_batch_untouched(
    llm_settings: Settings, clock: TickingClock, llm_server: ScriptedLLMServer,
) -> None:
    brain = build_container(llm_settings.model_copy(update={"consolidation_batch_size": 2}),
                            embedder=HashingEmbedder(), clock=clock)
    try:
        first_batch = [remember(brain, f"Acme note {n}") for n in range(2)]
        second_batch = [remember(brain, f"Acme later note {n}") for n in range(2)]
        llm_server.script({**empty_plan(), "merged_facts": [
            {"content": "Acme notes were taken", "source_ids": [m.id for m in first_batch]}]},
            "this is not JSON", {"merged_facts": "still not a list"})

        job = brain.consolidation.run_now()

        assert job.status is JobStatus.FAILED and "JSON" in (job.error or "")
        assert (job.result["batches"], job.result["merged"]) == (1, 1)  # the first batch is applied whole
        assert all(reread(brain, m).consolidated for m in first_batch)
        assert all(reread(brain, m).active and not reread(brain, m).consolidated for m in second_batch)
        assert not brain.consolidation.status().is_running  # the lock is released
    finally:
        brain.close()


def test_old_unaccessed_low_and_medium_events_expire(
    brain: Container, llm_server: ScriptedLLMServer, clock: TickingClock,
) -> None:
    # Given events stored 31 days ago, one of them read since, and one stored now
    stale = [remember(brain, "Standup happened", importance=Importance.LOW),
             remember(brain, "Build 812 passed", importance=Importance.MEDIUM)]
    important = remember(brain, "Acme signed the renewal", importance=Importance.HIGH)
    read = remember(brain, "Demo recorded", importance=Importance.LOW)
    old_fact = remember(brain, "Acme uses Vercel", type=MemoryType.FACT, importance=Importance.LOW)
    brain.memory.reinforce([read.id])
    clock.advance(days=31)
    fresh = remember(brain, "Build 900 passed", importance=Importance.LOW)
    llm_server.script(empty_plan())

    job = brain.consolidation.run_now()

    # Then only the old unaccessed low/medium events are soft-deleted, before anything is sent to the LLM
    assert job.result["expired"] == 2
    for memory in stale:
        after = reread(brain, memory)
        assert after.is_deleted and after.deleted_by == "consolidation" and "30 days" in (after.delete_reason or "")
    assert all(reread(brain, m).active for m in (important, read, old_fact, fresh))
    assert {row["id"] for row in asked(llm_server)["memories"]} == {important.id, read.id, old_fact.id, fresh.id}


def test_one_run_at_a_time_and_a_crashed_run_stops_blocking(brain: Container, clock: TickingClock) -> None:
    # Given a run that took the lock and then died (its process is gone, its job still says queued)
    crashed = brain.consolidation.start()
    assert brain.consolidation.status().is_running
    with pytest.raises(AlreadyRunning, match="consolidation already running"):
        brain.consolidation.start()
    # When the lock's lifetime has passed
    clock.advance(seconds=brain.settings.consolidation_lock_seconds + 1)
    assert not brain.consolidation.status().is_running
    # Then a new run starts, and the crashed job is recorded as failed
    fresh = brain.consolidation.start()
    assert fresh.id != crashed.id
    abandoned = brain.consolidation.job(crashed.id)
    assert abandoned.status is JobStatus.FAILED and "lock expired" in (abandoned.error or "")


def test_without_a_provider_nothing_starts(settings: Settings, clock: TickingClock) -> None:
    brain = build_container(settings, embedder=HashingEmbedder(), clock=clock)
    try:
        with pytest.raises(LLMUnavailable):
            brain.consolidation.start()
        assert brain.consolidation.run_scheduled() is None
        assert not brain.consolidation.status().is_running
    finally:
        brain.close()


def test_invented_ids_are_removed_from_a_plan() -> None:
    batch = [Memory(id=f"m{n}", type=MemoryType.EVENT, content="x", content_hash="h", source_agent="a",
                    created_at=_T0, updated_at=_T0) for n in range(3)]
    plan = ConsolidationPlan(merged_facts=[MergedFact(content="a", source_ids=["m0", "zz", "m0"]),
                                           MergedFact(content="b", source_ids=["zz"])])
    kept = keep_known_ids(plan, batch)
    assert [fact.source_ids for fact in kept.merged_facts] == [["m0"]]


@pytest.mark.parametrize(("expression", "period"), [
    ("0 */6 * * *", timedelta(hours=6)), ("*/15 * * * *", timedelta(minutes=15)), ("30 2 * * *", timedelta(days=1)),
    ("rate(6 hours)", timedelta(hours=6)), ("rate(1 day)", timedelta(days=1)),
])
def test_schedules_the_embedded_timer_understands(expression: str, period: timedelta) -> None:
    assert schedule_interval(expression) == period


@pytest.mark.parametrize("expression", ["0 */6 * * 1-5", "0 9,17 * * *", "*/0 * * * *", "rate(0 hours)", "soon"])
def test_schedules_it_refuses(expression: str) -> None:
    with pytest.raises(ValueError, match="consolidation_interval"):
        schedule_interval(expression)


_T0 = TickingClock().now()


class RefusingLauncher:
    def launch(self, job_id: str, run_here: object) -> None:
        raise ConnectionError("Lambda unreachable")


def test_a_job_that_cannot_be_launched_fails_and_frees_the_lock(
    brain: Container, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(brain.consolidation, "_launcher", RefusingLauncher())
    with pytest.raises(FeatureUnavailable, match="could not be started"):
        brain.consolidation.start_in_background()
    status = brain.consolidation.status()
    assert not status.is_running and status.last_run_at is not None


def test_the_embedded_timer_ticks_until_stopped(settings: Settings, brain: Container) -> None:
    ticked = threading.Event()
    task = PeriodicTask(timedelta(milliseconds=5), ticked.set, name="test-timer")
    task.start()
    assert ticked.wait(30)
    task.stop()
    assert not task._thread.is_alive()
    provider = ContainerProvider(lambda: brain)
    assert consolidation_schedule(settings, provider) is None  # off by default
    enabled = settings.model_copy(update={"consolidation_enabled": True, "consolidation_interval": "0 */6 * * *"})
    schedule = consolidation_schedule(enabled, provider)
    assert schedule is not None and schedule._period == 6 * 3600


def test_by_default_a_client_is_sent_in_batches_of_50(brain: Container, llm_server: ScriptedLLMServer) -> None:
    assert brain.settings.consolidation_batch_size == 50  # the default, not a test override
    for number in range(51):
        remember(brain, f"Acme note number {number}")
    llm_server.script(empty_plan(), empty_plan())
    job = brain.consolidation.run_now()
    assert job.status is JobStatus.SUCCEEDED, job.error
    assert [len(asked(llm_server, number)["memories"]) for number in range(2)] == [50, 1]
    assert (job.result["batches"], job.result["consolidated"]) == (2, 51)


AXIS = 0  # the stored memory's direction; the proposals lean away from it along their own axes


class PlannedVectors:
    """An embedder whose listed texts get chosen directions (everything else: the hashing embedder), so a test
    can place a proposal at an exact cosine from a stored memory."""

    def __init__(self, cosines: dict[str, tuple[float, int]], source: str, dimension: int = 64) -> None:
        self._fallback = HashingEmbedder(dimension)
        self._cosines = cosines
        self._source = source
        self._dimension = dimension

    @property
    def model_id(self) -> str:
        return "test:planned"

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Any) -> Any:
        vectors = self._fallback.embed(texts)
        for row, text in enumerate(texts):
            if text == self._source:
                vectors[row] = 0.0
                vectors[row, AXIS] = 1.0
            elif text in self._cosines:
                cosine, axis = self._cosines[text]
                vectors[row] = 0.0
                vectors[row, AXIS] = cosine
                vectors[row, axis] = (1.0 - cosine * cosine) ** 0.5
        return vectors


def test_the_cosine_threshold_is_092(llm_settings: Settings, clock: TickingClock,
                                     llm_server: ScriptedLLMServer) -> None:
    # Given a stored memory, and proposals just above and just below cosine 0.92 from it (different words)
    source_text = "Acme deploys every Friday afternoon"
    close, far = "Weekly releases happen at the end of the week", "Deployments go out once a week"
    embedder = PlannedVectors({close: (0.922, 1), far: (0.918, 2)}, source_text)
    brain = build_container(llm_settings, embedder=embedder, clock=clock)
    try:
        assert brain.settings.consolidation_similarity == 0.92  # the default
        source = remember(brain, source_text)
        llm_server.script({**empty_plan(), "merged_facts": [
            {"content": close, "source_ids": [source.id]}, {"content": far, "source_ids": [source.id]}]})
        job = brain.consolidation.run_now()
        # Then the close one is skipped as a duplicate and the other is stored, superseding the source
        assert job.status is JobStatus.SUCCEEDED, job.error
        assert (job.result["skipped_duplicates"], job.result["merged"], job.result["superseded"]) == (1, 1, 1)
        stored = brain.memory.query(RecordQuery(type=MemoryType.FACT, source_agent="consolidation"))
        assert [memory.content for memory in stored] == [far]
        assert reread(brain, source).superseded_by == stored[0].id
    finally:
        brain.close()


def test_a_schedule_tick_runs_a_consolidation(llm_settings: Settings, clock: TickingClock,
                                              llm_server: ScriptedLLMServer) -> None:
    enabled = llm_settings.model_copy(update={"consolidation_enabled": True})
    brain = build_container(enabled, embedder=HashingEmbedder(), clock=clock)
    try:
        remember(brain, "Acme renewed the contract")
        llm_server.script(empty_plan())
        schedule = consolidation_schedule(enabled, ContainerProvider(lambda: brain))
        assert schedule is not None
        ran = schedule._tick()  # what the timer thread calls every period
        assert len(llm_server.requests) == 1
        assert isinstance(ran, Job) and (ran.trigger, ran.status) == ("schedule", JobStatus.SUCCEEDED)
        assert brain.consolidation.job(ran.id).result["consolidated"] == 1
        assert brain.consolidation.status().last_run_at == ran.finished_at
    finally:
        brain.close()


def test_the_embedded_server_runs_the_timer_only_while_serving(llm_settings: Settings, clock: TickingClock) -> None:
    from fastapi.testclient import TestClient
    from zengram.embedded.app import build_embedded_app

    def timers() -> list[threading.Thread]:
        return [thread for thread in threading.enumerate() if thread.name == "zengram-consolidation"]

    for enabled in (False, True):
        settings = llm_settings.model_copy(update={"consolidation_enabled": enabled})
        brain = build_container(settings, embedder=HashingEmbedder(), clock=clock)
        with TestClient(build_embedded_app(settings, brain)):
            running = timers()
            assert len(running) == (1 if enabled else 0)
        assert all(not thread.is_alive() for thread in running)  # stopped with the server


def test_concurrent_starts_have_exactly_one_winner(brain: Container, clock: TickingClock) -> None:
    from concurrent.futures import ThreadPoolExecutor

    brain.consolidation.start()  # a crashed run whose lock has expired: every starter may race for it
    clock.advance(seconds=brain.settings.consolidation_lock_seconds + 1)

    def start() -> str | None:
        try:
            return brain.consolidation.start().id
        except AlreadyRunning:
            return None

    with ThreadPoolExecutor(max_workers=8) as pool:
        started = [job_id for job_id in pool.map(lambda _: start(), range(8)) if job_id is not None]
    assert len(started) == 1
    assert brain.consolidation.status().is_running


class _DuringTheCall:
    """The container's language model, with `during()` run once while the first batch is with the model (a PATCH,
    or another delivery of the same job, landing in the long LLM call)."""

    def __init__(self, llm: LanguageModel, during: Callable[[], object]) -> None:
        self._llm, self._during, self._done = llm, during, False

    @property
    def provider(self) -> str:
        return self._llm.provider

    @property
    def model(self) -> str:
        return self._llm.model

    def complete_json(self, system: str, user: str, schema: type[JsonModel]) -> JsonModel:
        answer = self._llm.complete_json(system, user, schema)
        if not self._done:
            self._done = True
            self._during()
        return answer


def _consolidation_with(brain: Container, clock: TickingClock, during: Callable[[], object]) -> ConsolidationService:
    return build_consolidation_service(brain.settings, brain.backend, brain.memory, brain.index, brain.embedder,
                                       _DuringTheCall(brain.llm, during), clock)


def test_expired_events_leave_the_entity_registry(
    brain: Container, llm_server: ScriptedLLMServer, clock: TickingClock,
) -> None:
    # Given an old unaccessed event naming Next.js and Vercel, and a recent one naming Next.js
    remember(brain, "Standup: the Next.js build on Vercel is slow", importance=Importance.LOW)
    clock.advance(days=31)
    remember(brain, "Next.js upgrade planned", importance=Importance.LOW)
    assert brain.entities.detail("Next.js").entity.mention_count == 2
    llm_server.script(empty_plan())

    # When consolidation expires the old one
    job = brain.consolidation.run_now()

    # Then it no longer counts as a mention, nor as a co-occurrence (as if it had been DELETEd)
    assert job.result["expired"] == 1, job.error
    nextjs = brain.entities.detail("Next.js")
    assert nextjs.entity.mention_count == 1
    assert "Vercel" not in [related.name for related in nextjs.related]
    top = {entity.name: entity.mention_count for entity in brain.entities.stats().top_mentioned}
    assert top.get("Vercel", 0) == 0 and top["Next.js"] == 1


def test_a_patch_landing_during_the_llm_call_is_kept(
    brain: Container, llm_server: ScriptedLLMServer, clock: TickingClock,
) -> None:
    # Given two memories the model will connect and categorise
    kickoff = remember(brain, "Kickoff call with Acme's marketing lead", metadata={"ticket": "OPS-1"})
    brief = remember(brain, "Acme sent the campaign brief")
    llm_server.script({**empty_plan(),
                       "connections": [{"memory_ids": [kickoff.id, brief.id], "relation": "same campaign"}],
                       "categories": [{"memory_id": kickoff.id, "knowledge_category": "meeting"},
                                      {"memory_id": brief.id, "knowledge_category": "brand"}]})

    def patch_meanwhile() -> None:  # someone PATCHes both while the model is thinking
        brain.memory.update(kickoff.id, MemoryPatch(metadata={"ticket": "OPS-7", "owner": "jane"}))
        brain.memory.update(brief.id, MemoryPatch(knowledge_category=KnowledgeCategory.CONTENT))

    consolidation = _consolidation_with(brain, clock, patch_meanwhile)
    job = consolidation.run_now()

    # Then the connections are added on top of the PATCHed metadata, and the category set meanwhile stays
    assert job.status is JobStatus.SUCCEEDED, job.error
    after_kickoff, after_brief = reread(brain, kickoff), reread(brain, brief)
    assert after_kickoff.metadata == {"ticket": "OPS-7", "owner": "jane",
                                      "connections": [{"memory_id": brief.id, "relation": "same campaign"}]}
    assert after_kickoff.knowledge_category is KnowledgeCategory.MEETING
    assert after_brief.knowledge_category is KnowledgeCategory.CONTENT
    assert after_brief.metadata["connections"] == [{"memory_id": kickoff.id, "relation": "same campaign"}]
    assert job.result["categorized"] == 1


def test_a_job_delivered_twice_does_the_work_once(
    brain: Container, llm_server: ScriptedLLMServer, clock: TickingClock,
) -> None:
    # Given a queued job, and a second delivery of it arriving while the first is with the model
    remember(brain, "Acme renewed the contract")
    llm_server.script(empty_plan(), empty_plan())  # enough for two runs: only one may ask
    duplicates: list[Job] = []
    consolidation = _consolidation_with(brain, clock, lambda: duplicates.append(consolidation.run(job.id)))
    job = consolidation.start()
    finished = consolidation.run(job.id)
    again = consolidation.run(job.id)  # a third, late delivery

    # Then the duplicate stopped without doing anything, and the first run did the work once
    assert [duplicate.status for duplicate in duplicates] == [JobStatus.RUNNING]
    assert finished.status is JobStatus.SUCCEEDED, finished.error
    assert finished.result["batches"] == 1 and len(llm_server.requests) == 1
    assert again == finished == brain.consolidation.job(job.id)
    assert not brain.consolidation.status().is_running
