"""Concurrent clients against a real uvicorn server: dedup, supersede and counters hold."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from zengram.assembly.containers import Container
from zengram.embedded.app import build_embedded_app
from zengram.embedded.background import BackgroundServer
from zengram.settings import Settings

from tests.support import API_KEY


@pytest.fixture
def server(settings: Settings, container: Container) -> Iterator[BackgroundServer]:
    with BackgroundServer(build_embedded_app(settings, container)) as live:
        yield live


def parallel(count: int, call: object) -> list[httpx.Response]:
    with ThreadPoolExecutor(max_workers=25) as pool:
        return list(pool.map(call, range(count)))  # type: ignore[arg-type]


@pytest.fixture
def http(server: BackgroundServer) -> Iterator[httpx.Client]:
    limits = httpx.Limits(max_connections=50)
    with httpx.Client(base_url=server.url, headers={"x-api-key": API_KEY}, limits=limits, timeout=60) as client:
        yield client


def test_fifty_identical_writes_make_one_memory(http: httpx.Client) -> None:
    body = {"type": "event", "content": "Nightly backup finished in 14 minutes", "source_agent": "cron-bot",
            "client_id": "acme"}
    responses = parallel(50, lambda _: http.post("/memory", json=body))
    assert sorted(r.status_code for r in responses) == [200] * 49 + [201]
    assert len({r.json()["id"] for r in responses}) == 1
    events = http.get("/memory/query", params={"type": "events", "client_id": "acme"}).json()
    assert events["count"] == 1


def test_fifty_writes_of_one_key_leave_exactly_one_active(http: httpx.Client) -> None:
    def write(i: int) -> httpx.Response:
        return http.post("/memory", json={"type": "fact", "content": f"Acme's monthly budget is {1000 + i} EUR",
                                          "source_agent": "finance-bot", "client_id": "acme", "key": "budget"})

    responses = parallel(50, write)
    assert all(r.status_code == 201 for r in responses)
    active = http.get("/memory/query", params={"type": "facts", "key": "budget", "client_id": "acme"}).json()
    history = http.get("/memory/query", params={"type": "facts", "key": "budget", "client_id": "acme",
                                                "include_superseded": "true", "limit": 100}).json()
    assert active["count"] == 1
    assert history["count"] == 50
    search = http.get("/memory/search", params={"q": "monthly budget", "client_id": "acme", "limit": 100}).json()
    assert [hit["id"] for hit in search["results"]] == [active["results"][0]["id"]]


def test_two_hundred_searches_count_every_hit(
    http: httpx.Client, server: BackgroundServer, container: Container
) -> None:
    for text in ("Invoices are sent on the first of the month", "Invoice numbering restarts every January",
                 "The office plants need water on Mondays"):
        assert http.post("/memory", json={"type": "event", "content": text, "source_agent": "ops"}).status_code == 201

    responses = parallel(200, lambda _: http.get("/memory/search", params={"q": "invoices", "limit": 2}))
    assert all(r.status_code == 200 for r in responses)
    hits: dict[str, int] = {}
    for response in responses:
        for result in response.json()["results"]:
            hits[result["id"]] = hits.get(result["id"], 0) + 1
    assert sum(hits.values()) == 400
    # Reinforcement runs after each response is sent; a graceful shutdown waits for all of it.
    http.close()
    server.__exit__()
    for memory_id, count in hits.items():
        stored = container.records.get(memory_id)
        assert stored is not None and stored.access_count == count
