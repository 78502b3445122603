"""The repair sweep judges each pending record on its own: a document the index refuses is counted, sent to the
back of the queue and finally parked, and never holds up the others."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Literal

import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import Container, build_container
from zengram.embedded.app import build_embedded_app
from zengram.kernel.errors import IndexRejected
from zengram.kernel.search import IndexDocument
from zengram.memory.domain.models import Memory, MemoryType
from zengram.memory.domain.requests import MemoryDraft, SearchRequest
from zengram.memory.services.index_guard import GuardedIndex
from zengram.settings import Settings

from tests.support import API_KEY, HashingEmbedder, TickingClock

Refusal = Literal["named", "whole"]


class RefusingIndex:
    """Wraps a real index. While `down`, every call fails as an unreachable server's would. Documents whose id is
    in `refused` are refused: "named" like an OpenSearch bulk answer (the others are written, the refused ones
    named), "whole" like a 413 for the whole request (nothing written). Counts upserts and documents sent."""

    def __init__(self, inner: Any, refusal: Refusal = "named") -> None:
        self.inner = inner
        self.refusal = refusal
        self.down = False
        self.refused: set[str] = set()
        self.upserts = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _reachable(self) -> None:
        if self.down:
            raise ConnectionError("connection refused")

    def upsert(self, documents: Sequence[IndexDocument], texts: dict[str, str] | None = None) -> None:
        self._reachable()
        self.upserts += 1
        bad = {document.id: "400 mapper_parsing_exception: failed to parse field [text]"
               for document in documents if document.id in self.refused}
        if bad and self.refusal == "whole":
            raise IndexRejected("OpenSearch refused the request: 413 content_too_long_exception")
        self.inner.upsert([document for document in documents if document.id not in bad], texts)
        if bad:
            raise IndexRejected(f"OpenSearch rejected {len(bad)} document(s)", bad)

    def set_attributes(self, updates: dict[str, Any]) -> None:
        self._reachable()
        self.inner.set_attributes(updates)

    def set_texts(self, texts: dict[str, str]) -> None:
        self._reachable()
        self.inner.set_texts({memory_id: text for memory_id, text in texts.items() if memory_id not in self.refused})
        if self.refused & set(texts):
            raise IndexRejected("OpenSearch rejected 1 document(s)", {memory_id: "refused" for memory_id in texts
                                                                        if memory_id in self.refused})

    def delete(self, memory_ids: Sequence[str]) -> None:
        self._reachable()
        self.inner.delete(memory_ids)


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"index_repair_attempts": 3})


@pytest.fixture
def brain(settings: Settings, clock: TickingClock) -> Iterator[Container]:
    built = build_container(settings, embedder=HashingEmbedder(), clock=clock)
    built.memory.index_sync.ensure_compatible()
    yield built
    built.close()


def refusing(brain: Container, refusal: Refusal = "named") -> RefusingIndex:
    guard = brain.index
    assert isinstance(guard, GuardedIndex)
    wrapper = RefusingIndex(guard.inner, refusal)
    guard.inner = wrapper
    return wrapper


def stored_while_down(brain: Container, index: RefusingIndex, clock: TickingClock, count: int) -> list[Memory]:
    """`count` memories written while the index was down: stored, all pending. Then it comes back."""
    index.down = True
    memories = [brain.memory.store(MemoryDraft(type=MemoryType.DECISION, content=f"decision number {n} taken",
                                               source_agent="planner")).memory for n in range(count)]
    index.down = False
    clock.advance(seconds=31)  # past the circuit's cool-down
    return memories


def searchable(brain: Container, memory: Memory) -> bool:
    hits = brain.memory.search(SearchRequest(q=memory.content, limit=5)).hits
    return memory.id in {hit.memory.id for hit in hits}


@pytest.mark.parametrize("refusal", ["named", "whole"])
def test_one_refused_document_does_not_hold_up_the_rest(brain: Container, clock: TickingClock,
                                                        refusal: Refusal) -> None:
    # Given 120 pending records, more than two batches, the oldest of which the index refuses
    index = refusing(brain, refusal)
    memories = stored_while_down(brain, index, clock, 120)
    poison = memories[0]
    index.refused = {poison.id}

    # When the sweep runs, 50 records at a time
    report = brain.memory.index_sync.repair_until_clean(keep_going=lambda: True, batch=50)

    # Then every other record is indexed; the poison one has one failed attempt and waits at the back of the queue
    assert (report.indexed, report.failed, report.parked, report.stopped) == (119, 1, 0, None)
    assert [m.id for m in brain.outbox.pending_index(10)] == [poison.id]
    assert all(searchable(brain, memory) for memory in memories[1::17])
    assert not searchable(brain, poison)


def test_a_refused_event_does_not_fail_its_neighbours_whose_context_it_is(brain: Container,
                                                                          clock: TickingClock) -> None:
    # Events are indexed with the events around them as context, so repairing one refreshes its neighbours' text
    index = refusing(brain)
    index.down = True
    events = [brain.memory.store(MemoryDraft(type=MemoryType.EVENT, content=f"standup note {n}",
                                             source_agent="scribe")).memory for n in range(9)]
    index.down = False
    clock.advance(seconds=31)
    index.refused = {events[4].id}

    report = brain.memory.index_sync.repair_until_clean(keep_going=lambda: True, batch=3)

    assert (report.indexed, report.failed) == (8, 1)
    assert [m.id for m in brain.outbox.pending_index(10)] == [events[4].id]


def test_splitting_a_refused_batch_costs_a_few_requests_not_one_per_record(brain: Container,
                                                                           clock: TickingClock) -> None:
    index = refusing(brain, "whole")
    memories = stored_while_down(brain, index, clock, 128)
    index.refused = {memories[77].id}
    index.upserts = 0

    report = brain.memory.index_sync.repair_until_clean(keep_going=lambda: True, batch=128)

    assert (report.indexed, report.failed) == (127, 1)
    assert index.upserts == 1 + 2 * 7  # the batch, then two halves per level down to the refused record alone


def test_each_sweep_counts_one_attempt_and_the_third_parks_the_record(brain: Container, clock: TickingClock) -> None:
    index = refusing(brain)
    poison, healthy = stored_while_down(brain, index, clock, 2)
    index.refused = {poison.id}
    sweep = brain.memory.index_sync.repair_until_clean

    reports = [sweep(keep_going=lambda: True) for _ in range(4)]

    assert [(r.indexed, r.failed, r.parked) for r in reports] == [(1, 1, 0), (0, 1, 0), (0, 1, 1), (0, 0, 0)]
    assert brain.outbox.pending_index(10) == []
    [parked] = brain.outbox.parked_index(10)
    assert (parked.memory_id, parked.attempts) == (poison.id, 3)
    assert parked.last_error == ("IndexRejected: OpenSearch rejected 1 document(s)")
    assert searchable(brain, healthy)


def test_parked_records_show_in_stats_and_come_back_when_retried(settings: Settings, brain: Container,
                                                                 clock: TickingClock) -> None:
    index = refusing(brain)
    [poison] = stored_while_down(brain, index, clock, 1)
    index.refused = {poison.id}
    for _ in range(3):
        brain.memory.index_sync.repair_until_clean(keep_going=lambda: True)

    with TestClient(build_embedded_app(settings, brain), headers={"x-api-key": API_KEY}) as client:
        health = client.get("/stats").json()["index_health"]
        assert (health["status"], health["pending_index"], health["parked"]) == ("degraded", 0, 1)
        [shown] = health["parked_records"]
        assert (shown["id"], shown["revision"], shown["attempts"]) == (poison.id, poison.revision, 3)
        assert shown["last_error"] == "IndexRejected: OpenSearch rejected 1 document(s)"

        # When the cause is fixed and an operator retries the parked records
        index.refused = set()
        assert brain.memory.index_sync.retry_parked() == 1
        report = brain.memory.index_sync.repair_until_clean(keep_going=lambda: True)

        # Then the record is indexed and the dashboard is clean
        assert report.indexed == 1
        health = client.get("/stats").json()["index_health"]
        assert health == {"status": "ok", "pending_index": 0, "parked": 0, "parked_records": []}
        assert searchable(brain, poison)


def test_reindex_goes_past_a_refused_document_and_leaves_it_pending(brain: Container, clock: TickingClock) -> None:
    index = refusing(brain)
    memories = [brain.memory.store(MemoryDraft(type=MemoryType.FACT, content=f"setting {n} is on",
                                               source_agent="ops", key=f"setting-{n}")).memory for n in range(10)]
    poison = memories[4]
    index.refused = {poison.id}

    assert brain.memory.index_sync.reindex() == 10

    assert [m.id for m in brain.outbox.pending_index(10)] == [poison.id]
    assert brain.index.count() == 9
    index.refused = set()
    assert brain.memory.index_sync.repair_until_clean(keep_going=lambda: True).indexed == 1
    assert brain.index.count() == 10
