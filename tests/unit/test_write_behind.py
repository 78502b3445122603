"""A new memory's index write applied behind the write's answer (ADR 0040): the write answers while its embedding
is still running, every index call waits for what was queued before it (so a search after the answer finds
the write, and a delete cannot overtake the create it removes), a failure leaves the record pending for the
repair sweep, and an index that is down is answered at once as before."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt
import pytest
from zengram.assembly.containers import Container, build_container
from zengram.kernel.errors import IndexUnavailable
from zengram.kernel.search import IndexDocument, SearchFilters
from zengram.memory.domain.models import MemoryType, WriteKind
from zengram.memory.domain.requests import MemoryDraft, SearchRequest
from zengram.memory.services.stats import Dashboard
from zengram.memory.services.write_behind import IndexWriteBehind
from zengram.settings import Settings

from tests.support import HashingEmbedder, TickingClock

WAIT_SECONDS = 10.0  # a bound on a wait that ends at once when the code is right, not a timing assertion
STILL_WAITING_SECONDS = 0.3  # how long a call that must not return yet is given to (wrongly) return


# -- the queue itself ------------------------------------------------------------------------------------------


def gate() -> threading.Event:
    return threading.Event()


def started(target: object) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)  # type: ignore[arg-type]
    thread.start()
    return thread


def test_writes_are_applied_in_order_and_drain_waits_for_all_queued_before_it() -> None:
    behind = IndexWriteBehind(8, index_closed=lambda: True)
    applied: list[str] = []
    release = gate()
    behind.submit(lambda: (release.wait(WAIT_SECONDS), applied.append("first")))
    behind.submit(lambda: applied.append("second"))

    drained = started(behind.drain)
    drained.join(STILL_WAITING_SECONDS)
    assert drained.is_alive() and applied == []  # the first is held, so nothing queued is applied yet

    release.set()
    drained.join(WAIT_SECONDS)
    assert not drained.is_alive() and applied == ["first", "second"]
    behind.close()


def test_an_index_call_made_by_a_queued_write_does_not_wait_for_itself() -> None:
    behind = IndexWriteBehind(8, index_closed=lambda: True)
    done = gate()
    behind.submit(lambda: (behind.drain(), done.set()))

    assert done.wait(WAIT_SECONDS)
    behind.close()


def test_a_failed_write_does_not_stop_the_ones_after_it(caplog: pytest.LogCaptureFixture) -> None:
    behind = IndexWriteBehind(8, index_closed=lambda: True)
    applied: list[str] = []

    def failing() -> None:
        raise RuntimeError("index exploded")

    behind.submit(failing)
    behind.submit(lambda: applied.append("after"))
    behind.drain()

    assert applied == ["after"]
    assert "index exploded" in caplog.text
    behind.close()


def test_a_writer_waits_for_room_past_the_limit() -> None:
    behind = IndexWriteBehind(1, index_closed=lambda: True)
    release = gate()
    behind.submit(lambda: release.wait(WAIT_SECONDS))

    second = started(lambda: behind.submit(lambda: None))
    second.join(STILL_WAITING_SECONDS)
    assert second.is_alive()  # one is waiting already: no room

    release.set()
    second.join(WAIT_SECONDS)
    assert not second.is_alive()
    behind.close()


def test_close_applies_what_is_queued() -> None:
    behind = IndexWriteBehind(8, index_closed=lambda: True)
    applied: list[int] = []
    for n in range(5):
        behind.submit(lambda n=n: applied.append(n))  # type: ignore[misc]

    behind.close()

    assert applied == [0, 1, 2, 3, 4]


# -- behind a memory write ------------------------------------------------------------------------------------


class HeldEmbedder(HashingEmbedder):
    """Holds the embedding of any text that starts with "Held" until `release` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.holding = threading.Event()
        self.mended = False

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if any(text.startswith("Broken") for text in texts) and not self.mended:
            raise ConnectionError("embedding service gone")
        if any(text.startswith("Held") for text in texts):
            self.holding.set()
            self.release.wait(WAIT_SECONDS)
        return super().embed(texts)


@pytest.fixture
def held() -> HeldEmbedder:
    return HeldEmbedder()


@pytest.fixture
def brain(settings: Settings, held: HeldEmbedder, clock: TickingClock) -> Iterator[Container]:
    assert settings.index_behind_writes > 0  # the default
    built = build_container(settings, embedder=held, clock=clock)
    yield built
    held.release.set()
    built.close()


def held_draft(content: str = "Held: the payroll export moved to Fridays") -> MemoryDraft:
    return MemoryDraft(type=MemoryType.EVENT, content=content, source_agent="ops-bot", client_id="acme")


def test_a_write_answers_while_its_embedding_runs_and_a_search_after_it_finds_it(
        brain: Container, held: HeldEmbedder) -> None:
    result = brain.memory.store(held_draft())  # returns although the embedding is held

    assert result.kind is WriteKind.CREATED and result.indexed
    assert held.holding.is_set()
    assert brain.memory.get(result.memory.id).content == result.memory.content  # the record is stored now

    found: list[list[str]] = []
    search = started(lambda: found.append([hit.memory.id for hit in brain.memory.search(
        SearchRequest(q="payroll export Fridays", client_id="acme")).hits]))
    search.join(STILL_WAITING_SECONDS)
    assert search.is_alive()  # it waits for the queued index write, rather than missing the memory

    held.release.set()
    search.join(WAIT_SECONDS)
    assert found == [[result.memory.id]]


def test_a_delete_right_after_a_write_is_not_overtaken_by_its_index_write(
        brain: Container, held: HeldEmbedder) -> None:
    result = brain.memory.store(held_draft())
    deleting = started(lambda: brain.memory.delete(result.memory.id, by="ops-bot", reason="wrong"))
    deleting.join(STILL_WAITING_SECONDS)
    assert deleting.is_alive()  # its index call waits for the create queued before it

    held.release.set()
    deleting.join(WAIT_SECONDS)
    assert not deleting.is_alive()

    vector = HashingEmbedder().embed([result.memory.index_text()])[0]
    hits = brain.index.vector_search(vector, SearchFilters(client_id="acme"), 10)
    assert result.memory.id not in [hit.id for hit in hits]
    assert brain.memory.search(SearchRequest(q="payroll export Fridays", client_id="acme")).hits == []


def test_stats_read_while_a_write_is_behind_its_answer_count_it_indexed_not_pending(
        brain: Container, held: HeldEmbedder) -> None:
    brain.memory.store(held_draft())
    dashboards: list[Dashboard] = []
    reading = started(lambda: dashboards.append(brain.stats.dashboard()))
    reading.join(STILL_WAITING_SECONDS)
    held.release.set()
    reading.join(WAIT_SECONDS)

    [dashboard] = dashboards
    assert (dashboard.records.pending_index, dashboard.index.count) == (0, 1)  # one consistent answer


def test_a_failed_index_write_leaves_the_record_pending_and_the_sweep_indexes_it(
        brain: Container, clock: TickingClock, monkeypatch: pytest.MonkeyPatch) -> None:
    inner = brain.index.inner  # type: ignore[attr-defined]
    upsert = inner.upsert

    def down(documents: Sequence[IndexDocument], texts: dict[str, str] | None = None) -> None:
        raise ConnectionError("index node gone")

    monkeypatch.setattr(inner, "upsert", down)
    first = brain.memory.store(MemoryDraft(type=MemoryType.FACT, content="Acme's fiscal year starts in April",
                                           key="acme-fiscal-year", source_agent="ops-bot", client_id="acme"))
    assert first.indexed  # answered before the index write was tried
    with pytest.raises(IndexUnavailable):
        brain.index.count()  # waits for the write behind, which failed and opened the circuit

    second = brain.memory.store(MemoryDraft(type=MemoryType.FACT, content="Acme's auditors are Grant & Co",
                                            key="acme-auditors", source_agent="ops-bot", client_id="acme"))
    assert not second.indexed  # the circuit is open: answered at once, as without a queue

    pending = {memory.id for memory in brain.backend.outbox.pending_index(10)}
    assert pending == {first.memory.id, second.memory.id}

    monkeypatch.setattr(inner, "upsert", upsert)
    clock.advance(seconds=brain.settings.index_circuit_open_seconds + 1)  # the circuit lets a probe through
    brain.memory.index_sync.repair()
    assert brain.backend.outbox.pending_index(10) == []
    hits = brain.memory.search(SearchRequest(q="Acme fiscal year auditors", client_id="acme")).hits
    assert {hit.memory.id for hit in hits} == {first.memory.id, second.memory.id}


def test_what_a_failed_write_behind_left_pending_the_next_one_that_succeeds_repairs(
        brain: Container, held: HeldEmbedder) -> None:
    held.release.set()
    broken = brain.memory.store(held_draft("Broken: the VPN certificate expires in May"))
    assert broken.indexed  # answered before its embedding failed
    brain.index.count()
    assert [memory.id for memory in brain.backend.outbox.pending_index(10)] == [broken.memory.id]

    held.mended = True  # the embedder answers again; nothing else is done about the pending record
    later = brain.memory.store(held_draft("Held: the VPN moves to WireGuard"))

    hits = brain.memory.search(SearchRequest(q="VPN certificate WireGuard", client_id="acme")).hits
    assert {hit.memory.id for hit in hits} == {broken.memory.id, later.memory.id}
    assert brain.backend.outbox.pending_index(10) == []


def test_with_no_queue_a_write_answers_only_once_indexed(settings: Settings, held: HeldEmbedder,
                                                         clock: TickingClock) -> None:
    built = build_container(settings.model_copy(update={"index_behind_writes": 0}), embedder=held, clock=clock)
    try:
        results: list[bool] = []
        writing = started(lambda: results.append(built.memory.store(held_draft()).indexed))
        writing.join(STILL_WAITING_SECONDS)
        assert writing.is_alive()  # waiting for its held embedding

        held.release.set()
        writing.join(WAIT_SECONDS)
        assert results == [True]
    finally:
        held.release.set()
        built.close()
