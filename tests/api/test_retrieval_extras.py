"""Upstream Zengram's retrieval extras through GET /memory/search (docs/retrieval-extras.md): the date window
(`date_from`/`date_to`), the temporal resolver and boost (`reference_date`), query expansion, the graph path and
the rerank hook (against a small local re-ranker), each with what the `retrieval` block reports."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError
from zengram.assembly.containers import build_container
from zengram.embedded.app import build_embedded_app
from zengram.kernel.ports import Embedder
from zengram.memory.services.graph import GraphPath
from zengram.settings import Settings

from tests.api.helpers import assert_error, search, store
from tests.rerank_server import RerankServer, word_overlap
from tests.support import API_KEY, TickingClock

MakeClient = Callable[..., TestClient]
MEDIUM = 0.7  # the importance weight of a medium memory: effective_score = score × 0.7 × boosts


@pytest.fixture
def make_client(tmp_path: Any, minilm: Embedder) -> Iterator[MakeClient]:
    """An app with these settings (the clock starts 2026-03-01 12:00 UTC); closed after the test."""
    with ExitStack() as stack:
        def build(**overrides: Any) -> TestClient:
            settings = Settings(data_dir=tmp_path / f"data-{len(stack._exit_callbacks)}", api_key=API_KEY,
                                rate_limit_enabled=False, reinforce_on_search=False, **overrides)
            container = build_container(settings, embedder=minilm, clock=TickingClock())
            stack.callback(container.close)
            return stack.enter_context(TestClient(build_embedded_app(settings, container),
                                                  headers={"x-api-key": API_KEY}))
        yield build


def contents(client: TestClient, q: str, **params: Any) -> list[str]:
    return [hit["content"] for hit in search(client, q, limit=20, format="full", **params)["results"]]


DEPLOYS = {  # valid_from → content
    "2026-02-28T09:00:00Z": "Deployed the billing service to production",
    "2026-02-20T09:00:00Z": "Deployed the search service to production",
    "2026-01-15T09:00:00Z": "Deployed the mobile gateway to production",
    "2025-11-03T09:00:00Z": "Deployed the reporting jobs to production",
}


def store_deploys(client: TestClient) -> None:
    for valid_from, content in DEPLOYS.items():
        store(client, content, valid_from=valid_from, client_id="acme-corp")


# -- date_from / date_to: always available ------------------------------------------------------------------------

def test_date_from_and_date_to_keep_memories_that_happened_within(make_client: MakeClient) -> None:
    client = make_client()
    store_deploys(client)
    window = {"date_from": "2026-01-01T00:00:00Z", "date_to": "2026-02-25T00:00:00Z"}
    assert sorted(contents(client, "deployed to production", **window)) == [
        "Deployed the mobile gateway to production", "Deployed the search service to production"]
    assert contents(client, "deployed", date_from="2026-02-28T09:00:00Z") == [DEPLOYS["2026-02-28T09:00:00Z"]]
    body = search(client, "deployed", format="full", **window)
    assert body["retrieval"]["date_window"] == {"from": "2026-01-01T00:00:00+00:00",
                                                "to": "2026-02-25T00:00:00+00:00"}
    assert "temporal" not in body["retrieval"]  # the resolver is off: "deployed" is no time word anyway


def test_a_memory_without_valid_from_happened_when_it_was_stored(make_client: MakeClient) -> None:
    client = make_client()
    store(client, "Rotated the staging certificates")  # stored at the clock's 2026-03-01 12:00
    assert contents(client, "certificates", date_from="2026-03-01T00:00:00Z") == ["Rotated the staging certificates"]
    assert contents(client, "certificates", date_to="2026-02-28T00:00:00Z") == []


@pytest.mark.parametrize(("params", "field"), [
    ({"date_from": "2026-03-02T00:00:00Z", "date_to": "2026-03-01T00:00:00Z"}, "date_to"),
    ({"date_from": "last week"}, "date_from"),
    ({"date_to": "2026-13-01"}, "date_to"),
    ({"reference_date": "yesterday"}, "reference_date"),
])
def test_bad_dates_are_400s_naming_the_field(make_client: MakeClient, params: dict[str, str], field: str) -> None:
    response = make_client().get("/memory/search", params={"q": "deploy", **params})
    assert_error(response, 400, field)


# -- the temporal resolver ----------------------------------------------------------------------------------------

def test_the_resolver_turns_time_words_into_a_window(make_client: MakeClient) -> None:
    client = make_client(temporal_resolver="all")
    store_deploys(client)
    # relative to now (the clock: 2026-03-01 12:00)
    assert contents(client, "What did we deploy yesterday?") == [DEPLOYS["2026-02-28T09:00:00Z"]]
    # relative to a reference date
    in_january = contents(client, "what was deployed last month", reference_date="2026-02-10T00:00:00Z")
    assert in_january == [DEPLOYS["2026-01-15T09:00:00Z"]]
    assert contents(client, "deploys in November", reference_date="2026-02-10T00:00:00Z") == [
        DEPLOYS["2025-11-03T09:00:00Z"]]
    body = search(client, "What did we deploy yesterday?", format="full")
    assert body["retrieval"]["temporal"] == {
        "dateFrom": "2026-02-28T00:00:00+00:00", "dateTo": "2026-02-28T23:59:59.999999+00:00",
        "isTemporalQuery": True, "temporalPattern": "yesterday", "boost": False}


def test_calendar_mode_narrows_by_month_and_year_names_only(make_client: MakeClient) -> None:
    client = make_client(temporal_resolver="calendar")
    store_deploys(client)
    assert contents(client, "what was deployed in November 2025") == [DEPLOYS["2025-11-03T09:00:00Z"]]
    assert contents(client, "deploys in January", reference_date="2026-02-10T00:00:00Z") == [
        DEPLOYS["2026-01-15T09:00:00Z"]]
    assert len(contents(client, "What did we deploy yesterday?")) == len(DEPLOYS)  # relative words: no window
    body = search(client, "deployed recently in February 2026", format="full")
    assert body["retrieval"]["temporal"]["temporalPattern"] == "named_month"
    assert sorted(hit["content"] for hit in body["results"]) == sorted(
        [DEPLOYS["2026-02-20T09:00:00Z"], DEPLOYS["2026-02-28T09:00:00Z"]])


def test_explicit_bounds_win_over_resolved_ones(make_client: MakeClient) -> None:
    client = make_client(temporal_resolver="all")
    store_deploys(client)
    assert sorted(contents(client, "deployed recently")) == sorted(  # "recently": the 14 days to now
        [DEPLOYS["2026-02-20T09:00:00Z"], DEPLOYS["2026-02-28T09:00:00Z"]])
    found = contents(client, "deployed recently", date_from="2026-01-01T00:00:00Z")  # the explicit start wins
    assert sorted(found) == sorted(
        [DEPLOYS["2026-01-15T09:00:00Z"], DEPLOYS["2026-02-20T09:00:00Z"], DEPLOYS["2026-02-28T09:00:00Z"]])


def test_with_the_resolver_off_time_words_filter_nothing(make_client: MakeClient) -> None:
    client = make_client()
    store_deploys(client)
    assert len(contents(client, "What did we deploy yesterday?")) == len(DEPLOYS)
    assert "temporal" not in search(client, "What did we deploy yesterday?", format="full")["retrieval"]


def test_the_boost_favours_memories_near_the_reference_date(make_client: MakeClient) -> None:
    client = make_client(temporal_boost=True)
    store_deploys(client)

    def boost_of(q: str, **params: Any) -> dict[str, float]:
        body = search(client, q, format="full", limit=10, **params)
        return {hit["content"]: hit["effective_score"] / hit["score"] / MEDIUM for hit in body["results"]}

    near = boost_of("which service was deployed before the freeze", reference_date="2026-01-15T09:00:00Z")
    assert near[DEPLOYS["2026-01-15T09:00:00Z"]] == pytest.approx(2.0, abs=0.01)
    assert near[DEPLOYS["2026-02-20T09:00:00Z"]] == pytest.approx(1 + math.exp(-36 / 30), abs=0.01)  # 36 days
    assert near[DEPLOYS["2025-11-03T09:00:00Z"]] == pytest.approx(1 + math.exp(-73 / 30), abs=0.01)  # 73 days
    # no reference date, or no time word: no boost
    unboosted = [*boost_of("which service was deployed before the freeze").values(),
                 *boost_of("which service was deployed", reference_date="2026-01-15T09:00:00Z").values()]
    assert len(unboosted) == 2 * len(DEPLOYS) and all(boost == pytest.approx(1.0, abs=0.01) for boost in unboosted)
    body = search(client, "deployed before the freeze", format="full", reference_date="2026-01-15T09:00:00Z")
    assert body["retrieval"]["temporal"]["boost"] is True
    assert "date_window" not in body["retrieval"]  # the boost alone narrows nothing


# -- query expansion ------------------------------------------------------------------------------------------------

def test_a_vague_query_is_expanded_on_the_vector_path(make_client: MakeClient) -> None:
    client = make_client(query_expansion=True)
    store(client, "Maria loved the John Mulaney stand-up special on Netflix")
    body = search(client, "Can you recommend a show to watch?", format="full")
    assert body["retrieval"]["query_domain"] == "entertainment"
    assert body["retrieval"]["expanded_query"].startswith("Can you recommend a show to watch? show movie series")
    assert body["query"] == "Can you recommend a show to watch?"
    assert "expanded_query" not in search(client, "Which show did Maria watch?", format="full")["retrieval"]
    off = make_client()
    assert "query_domain" not in search(off, "Can you recommend a show to watch?", format="full")["retrieval"]


# -- the graph path -------------------------------------------------------------------------------------------------

GRAPH_CORPUS = [
    ("PostgreSQL and Redis share the cache host", "acme-corp"),
    ("The Redis eviction policy is allkeys-lru", "acme-corp"),
    ("Redis cluster holds the Globex sessions", "globex"),
    ("Lunch moved to Thursday afternoons", "acme-corp"),
]


@pytest.mark.parametrize("writer_entities", [True, False], ids=["writer-entities", "text-entities-only"])
def test_the_graph_path_adds_memories_of_named_entities_and_their_neighbours(make_client: MakeClient,
                                                                             writer_entities: bool) -> None:
    # With the writers' own entities (client, agent) linked, every memory of a client co-occurs with its client:
    # the path must not hop onto them (else "Lunch…" would come in through acme-corp).
    client = make_client(graph_retrieval=True, writer_entities=writer_entities)
    for content, client_id in GRAPH_CORPUS:
        store(client, content, client_id=client_id)
    body = search(client, "PostgreSQL tuning", client_id="acme-corp", format="full", limit=10)
    sources = {hit["content"]: hit["retrieval_sources"] for hit in body["results"]}
    assert body["retrieval"]["paths"]["graph"] == 2
    assert "graph" in sources["PostgreSQL and Redis share the cache host"]  # names PostgreSQL
    assert "graph" in sources["The Redis eviction policy is allkeys-lru"]  # Redis: one hop from PostgreSQL
    assert "graph" not in sources["Lunch moved to Thursday afternoons"]
    assert "Redis cluster holds the Globex sessions" not in sources  # another client's: never
    assert search(client, "lunch plans", format="full")["retrieval"]["paths"]["graph"] == 0  # names no entity
    off = make_client()
    assert "graph" not in search(off, "PostgreSQL tuning", format="full")["retrieval"]["paths"]


def test_a_failing_graph_path_leaves_the_search_whole(make_client: MakeClient,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    client = make_client(graph_retrieval=True)
    for content, client_id in GRAPH_CORPUS:
        store(client, content, client_id=client_id)

    def broken(*args: Any) -> list[Any]:
        raise RuntimeError("entity registry unreachable")

    monkeypatch.setattr(GraphPath, "search", broken)
    body = search(client, "PostgreSQL tuning", client_id="acme-corp", format="full")
    assert body["count"] == 3 and "degraded" not in body["retrieval"]
    assert "graph" not in body["retrieval"]["paths"]


# -- the rerank hook --------------------------------------------------------------------------------------------------

@pytest.fixture
def rerank_server() -> Iterator[RerankServer]:
    server = RerankServer().start()
    yield server
    server.stop()


RERANK_CORPUS = ["Nightly PostgreSQL backups go to Amazon S3", "PostgreSQL 16 runs the billing service",
                 "The wiki is archived every week", "Lunch moved to Thursday"]


def test_the_reranker_rescores_the_fused_top(make_client: MakeClient, rerank_server: RerankServer) -> None:
    client = make_client(rerank_enabled=True, rerank_url=rerank_server.url, rerank_candidates=3)
    for content in RERANK_CORPUS:
        store(client, content)
    query = "PostgreSQL backups"
    body = search(client, query, format="full", limit=2)
    assert body["retrieval"]["reranked"] is True
    sent = rerank_server.requests[-1]
    assert sent["query"] == query and len(sent["documents"]) == 3  # the fused top 3 (rerank_candidates ≥ limit)
    assert set(sent["documents"]) < set(RERANK_CORPUS)
    reranked = body["results"]
    assert [hit["score"] for hit in reranked] == [round(word_overlap(query, hit["content"]), 4) for hit in reranked]
    assert [hit["effective_score"] for hit in reranked] == [round(hit["score"] * MEDIUM, 4) for hit in reranked]
    assert [hit["content"] for hit in reranked] == ["Nightly PostgreSQL backups go to Amazon S3",
                                                    "PostgreSQL 16 runs the billing service"]
    search(client, query, limit=8)
    assert len(rerank_server.requests[-1]["documents"]) == 4  # a limit past rerank_candidates: all 4 hits


@pytest.mark.parametrize("failure", [{"fail_with": 500}, {"delay": 1.0}, {"raw_answer": {"nothing": []}}])
def test_a_failing_reranker_leaves_the_fused_order(make_client: MakeClient, rerank_server: RerankServer,
                                                   failure: dict[str, Any]) -> None:
    fused_client = make_client()
    client = make_client(rerank_enabled=True, rerank_url=rerank_server.url, rerank_timeout=0.3)
    for content in RERANK_CORPUS:
        store(fused_client, content)
        store(client, content)
    for name, value in failure.items():
        setattr(rerank_server, name, value)
    body = search(client, "PostgreSQL backups", format="full", limit=4)
    fused = search(fused_client, "PostgreSQL backups", format="full", limit=4)
    assert body["retrieval"]["reranked"] is False
    assert [(hit["content"], hit["score"]) for hit in body["results"]] == [
        (hit["content"], hit["score"]) for hit in fused["results"]]
    assert len(rerank_server.requests) == 1


def test_an_unreachable_reranker_leaves_the_fused_order(make_client: MakeClient) -> None:
    client = make_client(rerank_enabled=True, rerank_url="http://127.0.0.1:9/rerank", rerank_timeout=0.5)
    for content in RERANK_CORPUS:
        store(client, content)
    body = search(client, "PostgreSQL backups", format="full")
    assert body["retrieval"]["reranked"] is False and body["count"] == 4
    assert "reranked" not in search(make_client(), "PostgreSQL backups", format="full")["retrieval"]


# -- settings ----------------------------------------------------------------------------------------------------

def test_rerank_needs_a_url_and_upstreams_variable_names_work(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError, match="rerank_url"):
        Settings(rerank_enabled=True)
    with pytest.raises(ValidationError, match="rerank_url: must be an http"):
        Settings(rerank_enabled=True, rerank_url="file:///etc/passwd")
    monkeypatch.setenv("RERANK_ENABLED", "true")
    monkeypatch.setenv("RERANK_URL", "http://127.0.0.1:8090/rerank")
    monkeypatch.setenv("GRAPH_RETRIEVAL_ENABLED", "true")
    monkeypatch.setenv("RRF_GRAPH_WEIGHT", "0.25")
    loaded = Settings()
    assert (loaded.rerank_enabled, loaded.rerank_url, loaded.graph_retrieval, loaded.graph_weight) == (
        True, "http://127.0.0.1:8090/rerank", True, 0.25)
