"""The rerank hook: relevance mapping and re-sorting (zengram.memory.domain.rerank), the stage's fallback and circuit
(zengram.memory.services.rerank), and the HTTP adapter against a small local re-ranker (tests/rerank_server.py)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta

import pytest
from zengram.adapters.http import HttpReranker, RerankAnswerError, RerankError, parse_rerank_answer
from zengram.memory.domain.circuit import CircuitBreaker
from zengram.memory.domain.models import Memory, MemoryType
from zengram.memory.domain.rerank import apply_rerank, relevance
from zengram.memory.domain.scoring import ScoredMemory
from zengram.memory.services.rerank import RerankStage

from tests.rerank_server import RerankServer
from tests.support import ManualClock

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def hit(name: str, score: float, multiplier: float = 1.0) -> ScoredMemory:
    memory = Memory(id=name, type=MemoryType.EVENT, content=f"memory {name}", content_hash=name, source_agent="a",
                    client_id="acme", created_at=T0, updated_at=T0)
    return ScoredMemory(memory, score, round(score * multiplier, 4), ["vector"], multiplier)


def ids(hits: Sequence[ScoredMemory]) -> list[str]:
    return [h.memory.id for h in hits]


# -- pure -------------------------------------------------------------------------------------------------------

def test_relevance_keeps_probabilities_and_maps_logits_through_a_sigmoid() -> None:
    assert relevance(0.0) == 0.0
    assert relevance(0.73) == 0.73
    assert relevance(2.0) == pytest.approx(0.8808, abs=1e-4)
    assert relevance(-3.0) == pytest.approx(0.0474, abs=1e-4)
    assert relevance(-1000.0) == pytest.approx(0.0)
    assert relevance(1000.0) == pytest.approx(1.0)


def test_rerank_scores_replace_the_fused_score_and_keep_the_multipliers() -> None:
    pool = [hit("a", 0.9), hit("b", 0.8, multiplier=2.0), hit("c", 0.7), hit("d", 0.6)]
    reranked = apply_rerank(pool, {0: 0.2, 1: 0.3, 2: 0.9})  # d left out by the re-ranker
    assert ids(reranked) == ["c", "b", "a", "d"]
    assert [(h.score, h.effective_score) for h in reranked] == [(0.9, 0.9), (0.3, 0.6), (0.2, 0.2), (0.6, 0.6)]


def test_equal_rerank_scores_keep_the_fused_order() -> None:
    assert ids(apply_rerank([hit("a", 0.9), hit("b", 0.8), hit("c", 0.7)], {0: 0.5, 1: 0.5, 2: 0.5})) == ["a", "b", "c"]


# -- the stage --------------------------------------------------------------------------------------------------

class CountingReranker:
    """Scores the reverse of the fused order, or raises while `failing`."""

    def __init__(self) -> None:
        self.calls: list[int] = []
        self.failing = False

    def rerank(self, query: str, documents: Sequence[str]) -> dict[int, float]:
        self.calls.append(len(documents))
        if self.failing:
            raise TimeoutError("re-ranker timed out")
        return {i: i / len(documents) for i in range(len(documents))}

    def describe(self) -> str:
        return "counting"

    def close(self) -> None:
        pass


def stage(reranker: CountingReranker, clock: ManualClock, candidates: int = 3) -> RerankStage:
    return RerankStage(reranker, clock, candidates=candidates,
                       breaker=CircuitBreaker(failures_to_open=2, open_for=timedelta(seconds=30)))


def test_the_stage_reranks_the_pool_and_leaves_the_rest_after_it() -> None:
    reranker, clock = CountingReranker(), ManualClock()
    fused = [hit(name, 1 - i / 10) for i, name in enumerate("abcde")]
    hits, reranked = stage(reranker, clock).apply("q", fused, limit=2)
    assert reranked and reranker.calls == [3]
    assert ids(hits) == ["c", "b", "a", "d", "e"]
    hits, _ = stage(reranker, clock).apply("q", fused, limit=4)  # the pool is at least the limit
    assert reranker.calls[-1] == 4 and ids(hits) == ["d", "c", "b", "a", "e"]


def test_a_failing_reranker_keeps_the_fused_order_and_opens_the_circuit() -> None:
    reranker, clock = CountingReranker(), ManualClock()
    reranker.failing = True
    hook = stage(reranker, clock)
    fused = [hit("a", 0.9), hit("b", 0.8), hit("c", 0.7)]
    for _ in range(3):
        hits, reranked = hook.apply("q", fused, limit=3)
        assert (ids(hits), reranked) == (["a", "b", "c"], False)
    assert len(reranker.calls) == 2  # the third search did not wait on a re-ranker known to be down
    reranker.failing = False
    clock.advance(seconds=31)
    assert hook.apply("q", fused, limit=3)[1] is True  # one probe after the cool-down closes it again
    assert hook.apply("q", fused, limit=3)[1] is True


def test_fewer_than_two_hits_are_not_sent() -> None:
    reranker = CountingReranker()
    assert stage(reranker, ManualClock()).apply("q", [hit("a", 0.9)], limit=5) == ([hit("a", 0.9)], False)
    assert reranker.calls == []


# -- the HTTP adapter against a local re-ranker -----------------------------------------------------------------

@pytest.fixture
def server() -> Iterator[RerankServer]:
    running = RerankServer().start()
    yield running
    running.stop()


DOCUMENTS = ["Redis holds the sessions", "billing runs on PostgreSQL 16", "lunch moved to Thursday",
             "PostgreSQL backups run nightly at 2am"]


def test_cohere_shape_scores_every_document_with_model_and_key(server: RerankServer) -> None:
    scores = HttpReranker(server.url, model="rerank-test", api_key="sk-rerank").rerank("PostgreSQL backups", DOCUMENTS)
    assert scores == {0: 0.0, 1: 0.5, 2: 0.0, 3: 1.0}
    assert server.requests == [{"query": "PostgreSQL backups", "documents": DOCUMENTS, "return_documents": False,
                                "model": "rerank-test"}]
    assert server.authorizations == ["Bearer sk-rerank"]


def test_tei_shape_and_batches_merge_with_offsets(server: RerankServer) -> None:
    scores = HttpReranker(server.tei_url, api="tei", max_batch=3).rerank("PostgreSQL backups", DOCUMENTS)
    assert scores == {0: 0.0, 1: 0.5, 2: 0.0, 3: 1.0}
    assert [len(request["texts"]) for request in server.requests] == [3, 1]
    assert server.authorizations == ["", ""]
    assert "model" not in server.requests[0]


@pytest.mark.parametrize(("setup", "error", "message"), [
    ({"fail_with": 503}, RerankError, "HTTP 503: {\"error\": \"scripted failure\"}"),
    ({"raw_answer": {"unexpected": True}}, RerankAnswerError, "unexpected answer"),
    ({"raw_answer": {"results": [{"index": 99, "score": 1.0}]}}, RerankAnswerError, "no usable"),
    ({"delay": 0.5}, RerankError, "unreachable or too slow"),
])
def test_failures_raise_for_the_stage_to_fall_back(server: RerankServer, setup: dict[str, object],
                                                   error: type[Exception], message: str) -> None:
    for name, value in setup.items():
        setattr(server, name, value)
    reranker = HttpReranker(server.url, timeout=0.2)
    with pytest.raises(error) as raised:
        reranker.rerank("PostgreSQL", DOCUMENTS)
    assert message in str(raised.value)


def test_the_timeout_covers_all_chunks_of_a_call(server: RerankServer) -> None:
    server.delay = 0.15
    reranker = HttpReranker(server.url, timeout=0.25, max_batch=1)  # 4 requests of 0.15 s cannot fit
    started = time.monotonic()
    with pytest.raises(RerankError):
        reranker.rerank("PostgreSQL", DOCUMENTS)
    assert len(server.requests) <= 2 and time.monotonic() - started < 1.0


def test_an_unreachable_reranker_raises() -> None:
    with pytest.raises(RerankError, match="unreachable"):
        HttpReranker("http://127.0.0.1:9/rerank", timeout=0.5).rerank("q", ["a", "b"])


def test_answers_are_read_leniently_in_either_shape() -> None:
    bare = [{"index": 1, "score": 0.4}, {"index": 0, "relevance_score": -2}]
    assert parse_rerank_answer(bare, 2) == {1: 0.4, 0: -2.0}
    assert parse_rerank_answer({"results": [{"document": {"index": 0}, "relevance_score": 0.9}, "junk",
                                            {"index": True, "score": 1}, {"index": 1, "score": "high"}]}, 2) == {0: 0.9}
    with pytest.raises(RerankAnswerError):
        parse_rerank_answer({"results": []}, 2)
    with pytest.raises(RerankAnswerError):
        parse_rerank_answer("nope", 2)
