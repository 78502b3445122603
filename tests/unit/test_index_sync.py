"""The index is derived: failures leave records pending, repair and reindex bring it back."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from zengram.assembly.containers import Container, build_container
from zengram.kernel.errors import EmbeddingMismatch
from zengram.kernel.search import IndexDocument
from zengram.memory.domain.models import MemoryType
from zengram.memory.domain.requests import MemoryDraft, SearchRequest
from zengram.memory.services.index_guard import GuardedIndex
from zengram.settings import Settings
from zengram.web.errors import status_of

from tests.support import HashingEmbedder, ManualClock, TickingClock

CIRCUIT_COOL_DOWN = {"seconds": 31}  # past Settings.index_circuit_open_seconds: the next call probes the index


class FlakyIndex:
    """Wraps a real index; calls fail while `failing` is set, as an unreachable server's would. Counts calls."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.failing = False
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _check(self) -> None:
        self.calls += 1
        if self.failing:
            raise ConnectionError("index unreachable")

    def upsert(self, documents: Sequence[IndexDocument], texts: dict[str, str] | None = None) -> None:
        self._check()
        self.inner.upsert(documents, texts)

    def set_attributes(self, updates: dict[str, Any]) -> None:
        self._check()
        self.inner.set_attributes(updates)

    def set_texts(self, texts: dict[str, str]) -> None:
        self._check()
        self.inner.set_texts(texts)

    def delete(self, memory_ids: Sequence[str]) -> None:
        self._check()
        self.inner.delete(memory_ids)

    def keyword_search(self, *args: Any) -> Any:
        self._check()
        return self.inner.keyword_search(*args)

    def vector_search(self, *args: Any) -> Any:
        self._check()
        return self.inner.vector_search(*args)

    def count(self) -> int:
        self._check()
        return int(self.inner.count())


def draft(content: str, **fields: Any) -> MemoryDraft:
    return MemoryDraft(type=fields.pop("type", MemoryType.EVENT), content=content, source_agent="claude-code",
                       **fields)


def found(container: Container, query: str, **filters: Any) -> list[str]:
    result = container.memory.search(SearchRequest(q=query, limit=100, **filters))
    return [hit.memory.content for hit in result.hits]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Index writes before the answer: these tests are about what a write answers while the index is down (with
    writes behind the answer, the first write of an outage answers before its index write fails; see
    test_write_behind.py)."""
    return settings.model_copy(update={"index_behind_writes": 0})


@pytest.fixture
def flaky(hashing_container: Container) -> FlakyIndex:
    """The container's own index behind its own circuit breaker, made flaky underneath."""
    guard = hashing_container.index
    assert isinstance(guard, GuardedIndex)
    hashing_container.memory.index_sync.ensure_compatible()  # as a first write would, while the index is up
    wrapper = FlakyIndex(guard.inner)
    guard.inner = wrapper
    return wrapper


def back_up(flaky: FlakyIndex, clock: ManualClock) -> None:
    """The index answers again, and the circuit's cool-down is over."""
    flaky.failing = False
    clock.advance(**CIRCUIT_COOL_DOWN)


def test_index_outage_loses_no_write_and_repair_restores_search(
    hashing_container: Container, flaky: FlakyIndex, clock: TickingClock
) -> None:
    flaky.failing = True
    results = [hashing_container.memory.store(draft(f"incident {i} resolved by rollback")) for i in range(1000)]
    assert all(not result.indexed for result in results)
    assert hashing_container.records.count() == 1000
    assert len(hashing_container.outbox.pending_index(2000)) == 1000
    assert flaky.calls == 1  # the first failure opened the circuit: the other 999 writes never waited on the index

    back_up(flaky, clock)
    report = hashing_container.memory.index_sync.repair_until_clean(keep_going=lambda: True, batch=300)
    assert (report.indexed, report.failed, report.stopped) == (1000, 0, None)
    assert hashing_container.outbox.pending_index(10) == []
    assert hashing_container.index.count() == 1000
    assert "incident 999 resolved by rollback" in found(hashing_container, "incident 999")


def test_supersede_during_outage_is_repaired(hashing_container: Container, flaky: FlakyIndex,
                                             clock: TickingClock) -> None:
    hashing_container.memory.store(draft("plan uses Postgres", type=MemoryType.FACT, key="db"))
    flaky.failing = True
    hashing_container.memory.store(draft("plan uses DynamoDB", type=MemoryType.FACT, key="db"))
    back_up(flaky, clock)
    hashing_container.memory.index_sync.repair()
    assert found(hashing_container, "plan uses") == ["plan uses DynamoDB"]


def test_a_sweep_meeting_an_index_that_is_down_stops_and_blames_no_record(
    hashing_container: Container, flaky: FlakyIndex
) -> None:
    flaky.failing = True
    for i in range(5):
        hashing_container.memory.store(draft(f"deploy {i} went out"))
    report = hashing_container.memory.index_sync.repair_until_clean(keep_going=lambda: True)
    assert (report.indexed, report.failed, report.parked) == (0, 0, 0)
    assert report.stopped is not None and "unavailable" in report.stopped
    assert len(hashing_container.outbox.pending_index(10)) == 5
    assert hashing_container.outbox.parked_index(10) == []


def bound_to_model_one(settings: Settings) -> None:
    """An index built with 'test:one' (bound by its first write)."""
    first = build_container(settings, embedder=HashingEmbedder(model_id="test:one"), clock=TickingClock())
    assert first.memory.store(draft("bound the index to test:one")).indexed
    first.close()


def test_building_a_container_leaves_the_index_alone_until_it_is_used(settings: Settings) -> None:
    bound_to_model_one(settings)
    other = build_container(settings, embedder=HashingEmbedder(model_id="test:two"), clock=TickingClock())
    try:
        # a write with another model's index is stored and waits (for a reindex) instead of failing
        result = other.memory.store(draft("written after the model changed"))
        assert result.indexed is False
        assert [m.id for m in other.outbox.pending_index(10)] == [result.memory.id]
        # searching that index is refused, with what to do about it (503)
        with pytest.raises(EmbeddingMismatch, match="zengram reindex") as refused:
            found(other, "model")
        assert status_of(refused.value) == 503
    finally:
        other.close()


def test_opening_an_index_with_another_model_is_refused_when_checked(settings: Settings) -> None:
    bound_to_model_one(settings)
    with pytest.raises(EmbeddingMismatch, match="zengram reindex"):
        build_container(settings, embedder=HashingEmbedder(model_id="test:two"), clock=TickingClock(),
                        check_index=True)


def test_reindex_rebuilds_from_the_record_store(settings: Settings) -> None:
    first = build_container(settings, embedder=HashingEmbedder(model_id="test:one"), clock=TickingClock())
    first.memory.store(draft("kept memory about invoices"))
    doomed = first.memory.store(draft("deleted memory about invoices"))
    first.memory.delete(doomed.memory.id, by="claude-code", reason=None)
    first.close()
    Path(settings.index_path).unlink()  # the index is derived: losing it loses nothing

    second = build_container(settings, embedder=HashingEmbedder(model_id="test:two"), clock=TickingClock())
    assert found(second, "invoices") == []
    assert second.memory.index_sync.reindex() == 1
    assert found(second, "invoices") == ["kept memory about invoices"]
    assert second.index.model_id == "test:two"
    second.close()


def test_embedded_server_finishes_pending_index_writes_at_startup(
    settings: Settings, hashing_container: Container, flaky: FlakyIndex, clock: TickingClock
) -> None:
    from fastapi.testclient import TestClient
    from zengram.embedded.app import build_embedded_app

    from tests.support import API_KEY

    flaky.failing = True
    hashing_container.memory.store(draft("left pending by a crash"))
    back_up(flaky, clock)
    with TestClient(build_embedded_app(settings, hashing_container), headers={"x-api-key": API_KEY}) as client:
        assert hashing_container.outbox.pending_index(10) == []
        hits = client.get("/memory/search", params={"q": "pending crash"}).json()["results"]
        assert [hit["content"] for hit in hits] == ["left pending by a crash"]
