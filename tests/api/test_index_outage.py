"""The embedded host with its search index failing: writes are stored and wait, the routes that need only the record
store answer, /stats reports the index's health, and search degrades to the paths that still answer or says 503."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import Container, build_container
from zengram.embedded.app import build_embedded_app
from zengram.kernel.errors import IndexRejected
from zengram.memory.services.index_guard import GuardedIndex
from zengram.settings import Settings

from tests.api.helpers import get, query, search, store
from tests.support import API_KEY, HashingEmbedder, TickingClock


class BreakableIndex:
    """Wraps the real index: `down` makes every call fail as a dead disk or server would; `refuse_keyword` makes
    only keyword searches refused (the index answers, the query is at fault)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.down = False
        self.refuse_keyword = False

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.inner, name)
        if not callable(attribute) or name == "close":
            return attribute

        def call(*args: Any) -> Any:
            if self.down:
                raise OSError("disk I/O error")
            if name == "keyword_search" and self.refuse_keyword:
                raise IndexRejected("OpenSearch refused the request: 400 too_many_clauses")
            return attribute(*args)

        return call


class QueryFailingEmbedder(HashingEmbedder):
    """Embeds stored texts; fails on search queries while `fail_queries` is set (a provider outage)."""

    fail_queries = False

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if self.fail_queries and texts and texts[0].startswith("which"):
            raise TimeoutError("embedding provider timed out")
        return super().embed(texts)


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Index writes before the answer: these tests pin what a write answers while the index or the embedder is
    down, which only a write that waits for its index write can tell (the queue's own outage behaviour is in
    tests/unit/test_write_behind.py)."""
    return settings.model_copy(update={"index_behind_writes": 0})


@pytest.fixture
def brain(settings: Settings, clock: TickingClock) -> Iterator[Container]:
    built = build_container(settings, embedder=QueryFailingEmbedder(), clock=clock)
    yield built
    built.close()


@pytest.fixture
def index(brain: Container) -> BreakableIndex:
    guard = brain.index
    assert isinstance(guard, GuardedIndex)
    wrapper = BreakableIndex(guard.inner)
    guard.inner = wrapper  # type: ignore[assignment]
    return wrapper


@pytest.fixture
def api(settings: Settings, brain: Container, index: BreakableIndex) -> Iterator[TestClient]:
    with TestClient(build_embedded_app(settings, brain), headers={"x-api-key": API_KEY}) as client:
        yield client


def test_with_the_index_down_writes_are_stored_and_record_routes_answer(api: TestClient, index: BreakableIndex) -> None:
    index.down = True

    stored = store(api, "Payroll export moved to Tuesdays", type="decision", client_id="acme")

    assert stored["stored_in"] == {"vector": False, "structured_db": True}
    assert "not in the search index yet" in stored["warning"]
    assert get(api, stored["id"])["content"] == "Payroll export moved to Tuesdays"
    assert [row["id"] for row in query(api, type="decisions")["results"]] == [stored["id"]]
    exported = api.get("/export")
    assert exported.status_code == 200 and [row["id"] for row in exported.json()["memories"]] == [stored["id"]]
    assert api.get("/briefing", params={"since": "2020-01-01T00:00:00Z"}).status_code == 200


def test_with_the_index_down_stats_report_its_health(api: TestClient, index: BreakableIndex) -> None:
    store(api, "Kept while the index is down")
    index.down = True
    store(api, "Written while the index is down")

    response = api.get("/stats")

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["total_memories"] == 2
    assert "vectors_count" not in body and "keyword_index_count" not in body["retrieval"]
    health = body["index_health"]
    assert (health["status"], health["pending_index"], health["parked"]) == ("unavailable", 1, 0)
    assert "OSError: disk I/O error" in health["error"]


def test_with_the_index_down_search_answers_503_in_upstreams_shape(api: TestClient, index: BreakableIndex) -> None:
    store(api, "The deploy pipeline runs on GitHub Actions")
    index.down = True

    response = api.get("/memory/search", params={"q": "deploy pipeline"})

    assert response.status_code == 503
    body = response.json()
    assert body["error"].startswith("Search unavailable: ")
    assert "GET /memory/query" in body["error"]
    assert body["query"] == "deploy pipeline"
    assert body["retrieval"]["degraded"] is True and body["retrieval"]["reason"] == "search_index_unavailable"


def test_search_answers_again_once_the_index_is_back(api: TestClient, index: BreakableIndex,
                                                      clock: TickingClock) -> None:
    index.down = True
    stored = store(api, "Invoices are sent by the billing bot")
    assert api.get("/memory/search", params={"q": "invoices"}).status_code == 503

    index.down = False
    clock.advance(seconds=31)  # the circuit lets a probe through
    assert api.get("/memory/search", params={"q": "invoices"}).status_code == 200
    assert api.get("/stats").json()["index_health"]["status"] == "ok"
    brain_sync = api.app.state.provider.get().memory.index_sync  # type: ignore[attr-defined]
    assert brain_sync.repair_until_clean(keep_going=lambda: True).indexed == 1
    assert [hit["id"] for hit in search(api, "invoices billing")["results"]] == [stored["id"]]


def test_a_refused_keyword_path_degrades_search_to_the_vector_path(api: TestClient, index: BreakableIndex) -> None:
    stored = store(api, "Grafana alerts page the on-call engineer")
    index.refuse_keyword = True

    body = search(api, "grafana alerts on-call")

    assert [hit["id"] for hit in body["results"]] == [stored["id"]]
    assert body["retrieval"] == {"multi_path": True, "paths": {"vector": 1}, "degraded": True,
                                 "reason": "keyword_search_unavailable", "failed_paths": ["keyword"]}


def test_an_embedding_outage_degrades_search_to_the_keyword_path(api: TestClient, brain: Container) -> None:
    stored = store(api, "Grafana alerts page the on-call engineer")
    QueryFailingEmbedder.fail_queries = True
    try:
        body = search(api, "which grafana alerts page the on-call engineer")
    finally:
        QueryFailingEmbedder.fail_queries = False
    assert [hit["id"] for hit in body["results"]] == [stored["id"]]
    assert body["retrieval"]["reason"] == "vector_search_unavailable"
    assert body["retrieval"]["failed_paths"] == ["vector"]


def test_a_write_whose_embedding_fails_is_stored_and_waits_like_one_the_index_missed(api: TestClient,
                                                                                     brain: Container) -> None:
    """The embedding runs beside the record write: when it fails, the record is kept (the source of truth) and
    pending, as with the index down, and the repair sweep indexes it once the embedder answers again."""
    QueryFailingEmbedder.fail_queries = True
    try:
        stored = store(api, "which runbook covers the payroll export")
    finally:
        QueryFailingEmbedder.fail_queries = False

    assert stored["stored_in"] == {"vector": False, "structured_db": True}
    assert "not in the search index yet" in stored["warning"]
    assert get(api, stored["id"])["content"] == "which runbook covers the payroll export"
    assert api.get("/stats").json()["index_health"]["pending_index"] == 1
    assert brain.memory.index_sync.repair_until_clean(keep_going=lambda: True).indexed == 1
    assert [hit["id"] for hit in search(api, "payroll export runbook")["results"]] == [stored["id"]]
