"""The index is derived: failures leave records pending, repair and reindex bring it back."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from zengram.bootstrap import Container, build_container
from zengram.domain.errors import EmbeddingMismatch
from zengram.domain.models import MemoryType
from zengram.domain.requests import MemoryDraft, SearchRequest
from zengram.domain.search import IndexDocument
from zengram.settings import Settings

from tests.support import HashingEmbedder, TickingClock


class FlakyIndex:
    """Wraps a real index; writes fail while `failing` is set."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.failing = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _check(self) -> None:
        if self.failing:
            raise ConnectionError("index unreachable")

    def upsert(self, documents: Sequence[IndexDocument]) -> None:
        self._check()
        self.inner.upsert(documents)

    def set_attributes(self, updates: dict[str, Any]) -> None:
        self._check()
        self.inner.set_attributes(updates)

    def set_texts(self, texts: dict[str, str]) -> None:
        self._check()
        self.inner.set_texts(texts)

    def delete(self, memory_ids: Sequence[str]) -> None:
        self._check()
        self.inner.delete(memory_ids)


def draft(content: str, **fields: Any) -> MemoryDraft:
    return MemoryDraft(type=fields.pop("type", MemoryType.EVENT), content=content, source_agent="claude-code",
                       **fields)


def found(container: Container, query: str, **filters: Any) -> list[str]:
    result = container.memory.search(SearchRequest(q=query, limit=100, **filters))
    return [hit.memory.content for hit in result.hits]


@pytest.fixture
def flaky(hashing_container: Container) -> FlakyIndex:
    wrapper = FlakyIndex(hashing_container.index)
    hashing_container.memory._index = wrapper  # type: ignore[assignment]
    hashing_container.memory.index_sync._index = wrapper  # type: ignore[assignment]
    return wrapper


def test_index_outage_loses_no_write_and_repair_restores_search(
    hashing_container: Container, flaky: FlakyIndex
) -> None:
    flaky.failing = True
    results = [hashing_container.memory.store(draft(f"incident {i} resolved by rollback")) for i in range(1000)]
    assert all(not result.indexed for result in results)
    assert hashing_container.store.count() == 1000
    assert len(hashing_container.store.pending_index(2000)) == 1000

    flaky.failing = False
    repaired = 0
    while batch := hashing_container.memory.index_sync.repair(limit=300):
        repaired += batch
    assert repaired == 1000
    assert hashing_container.store.pending_index(10) == []
    assert hashing_container.index.count() == 1000
    assert "incident 999 resolved by rollback" in found(hashing_container, "incident 999")


def test_supersede_during_outage_is_repaired(hashing_container: Container, flaky: FlakyIndex) -> None:
    hashing_container.memory.store(draft("plan uses Postgres", type=MemoryType.FACT, key="db"))
    flaky.failing = True
    hashing_container.memory.store(draft("plan uses DynamoDB", type=MemoryType.FACT, key="db"))
    flaky.failing = False
    hashing_container.memory.index_sync.repair()
    assert found(hashing_container, "plan uses") == ["plan uses DynamoDB"]


def test_opening_an_index_with_another_model_is_refused(settings: Settings) -> None:
    build_container(settings, embedder=HashingEmbedder(model_id="test:one"), clock=TickingClock()).close()
    with pytest.raises(EmbeddingMismatch, match="zengram reindex"):
        build_container(settings, embedder=HashingEmbedder(model_id="test:two"), clock=TickingClock())


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
    settings: Settings, hashing_container: Container, flaky: FlakyIndex
) -> None:
    from fastapi.testclient import TestClient
    from zengram.embedded.app import build_embedded_app

    from tests.support import API_KEY

    flaky.failing = True
    hashing_container.memory.store(draft("left pending by a crash"))
    flaky.failing = False
    with TestClient(build_embedded_app(settings, hashing_container), headers={"x-api-key": API_KEY}) as client:
        assert hashing_container.store.pending_index(10) == []
        hits = client.get("/memory/search", params={"q": "pending crash"}).json()["results"]
        assert [hit["content"] for hit in hits] == ["left pending by a crash"]
