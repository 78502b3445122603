"""Per-API-key rate limits over HTTP: writes, reads and heavy (consolidate + research) budgets, 429 with
Retry-After, /health never limited. Small limits and a hand-moved clock, so no test waits for a window."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import APIRouter
from fastapi.testclient import TestClient
from zengram.assembly.containers import Container, build_container
from zengram.assembly.provider import ContainerProvider
from zengram.embedded.app import build_embedded_app
from zengram.memory.api import health, memory
from zengram.settings import Settings
from zengram.web.app import create_app
from zengram.web.rate_limits import limit_for

from tests.api.helpers import assert_error
from tests.api.helpers import memory as memory_body
from tests.support import API_KEY, HashingEmbedder, ManualClock

LIMITS = {"rate_limit_writes_per_minute": 3, "rate_limit_reads_per_minute": 2, "rate_limit_heavy_per_hour": 1}

# Stand-ins at the heavy paths: the budget is matched by method and path, whatever the route does.
heavy = APIRouter()


@heavy.post("/consolidate")
def consolidate() -> dict[str, bool]:
    return {"started": True}


@heavy.post("/research")
def research() -> dict[str, bool]:
    return {"started": True}


@heavy.get("/consolidate")
def consolidation_status() -> dict[str, str]:
    return {"status": "idle"}


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()  # 12:00:00 sharp: a minute and an hour window both start now


@pytest.fixture
def limited(tmp_path: Path, clock: ManualClock) -> Iterator[tuple[Settings, Container]]:
    settings = Settings(data_dir=tmp_path / "data", api_key=API_KEY, rate_limit_enabled=True, **LIMITS)
    container = build_container(settings, embedder=HashingEmbedder(), clock=clock)
    yield settings, container
    container.close()


@pytest.fixture
def api(limited: tuple[Settings, Container]) -> Iterator[TestClient]:
    settings, container = limited
    with TestClient(build_embedded_app(settings, container), headers={"x-api-key": API_KEY}) as test_client:
        yield test_client


@pytest.fixture
def heavy_api(limited: tuple[Settings, Container]) -> Iterator[TestClient]:
    _, container = limited
    app = create_app([health.router, memory.router, heavy], ContainerProvider(lambda: container),
                     expected_key=lambda: API_KEY)
    with TestClient(app, headers={"x-api-key": API_KEY}) as test_client:
        yield test_client


def store(api: TestClient, n: int) -> int:
    return api.post("/memory", json=memory_body(f"Deploy number {n} went out")).status_code


def test_writes_over_the_limit_get_429_with_retry_after(
    api: TestClient, clock: ManualClock, limited: tuple[Settings, Container]
) -> None:
    assert [store(api, n) for n in range(3)] == [201, 201, 201]
    clock.advance(seconds=15)
    response = api.post("/memory", json=memory_body("one too many"))
    message = assert_error(response, 429)
    assert message.startswith("rate limit:") and "3 writes per minute" in message
    assert response.headers["retry-after"] == "45"
    assert (response.json()["limit"], response.json()["window_seconds"]) == (3, 60)  # upstream's fields
    assert limited[1].records.count() == 3  # the refused write changed nothing


def test_every_write_method_shares_the_write_budget(api: TestClient) -> None:
    memory_id = api.post("/memory", json=memory_body("Acme moved to Vercel")).json()["id"]
    assert api.patch(f"/memory/{memory_id}", json={"importance": "high"}).status_code == 200
    assert api.put("/clients/acme", json={"aliases": ["Acme"]}).status_code == 201
    assert_error(api.delete("/clients/acme"), 429)


def test_a_new_window_restores_the_budget(api: TestClient, clock: ManualClock) -> None:
    assert [store(api, n) for n in range(4)] == [201, 201, 201, 429]
    clock.advance(seconds=60)
    assert store(api, 4) == 201


def test_reads_and_writes_have_separate_budgets(api: TestClient) -> None:
    assert [api.get("/clients").status_code for _ in range(3)] == [200, 200, 429]
    assert store(api, 0) == 201  # reads spent, writes untouched
    assert [store(api, n) for n in range(1, 4)] == [201, 201, 429]
    assert_error(api.get("/memory/query", params={"type": "events"}), 429)


def test_health_is_never_limited(api: TestClient) -> None:
    assert {api.get("/health").status_code for _ in range(10)} == {200}


def test_refused_keys_do_not_spend_the_budget(api: TestClient) -> None:
    for _ in range(5):
        assert_error(api.get("/clients", headers={"x-api-key": "wrong"}), 401)
    assert [api.get("/clients").status_code for _ in range(2)] == [200, 200]


def test_consolidate_and_research_share_one_budget_per_hour(heavy_api: TestClient, clock: ManualClock) -> None:
    assert heavy_api.post("/consolidate").status_code == 200
    clock.advance(minutes=10)
    response = heavy_api.post("/research")
    assert "per hour" in assert_error(response, 429)
    assert response.headers["retry-after"] == str(50 * 60)
    assert heavy_api.get("/consolidate").status_code == 200  # a status read is a read, not a run
    assert store(heavy_api, 0) == 201  # and the write budget is its own
    clock.advance(minutes=50)
    assert heavy_api.post("/research").status_code == 200


def test_counters_are_keyed_by_the_key_id_never_the_key(api: TestClient, limited: tuple[Settings, Container]) -> None:
    settings, _ = limited
    store(api, 0)
    with sqlite3.connect(settings.records_path) as connection:
        rows = connection.execute("SELECT key, bucket, hits FROM rate_limits").fetchall()
    assert rows == [("key:bootstrap", "writes", 1)]  # BRAIN_API_KEY's id; a scoped key counts under its own
    dump = "\n".join(sqlite3.connect(settings.records_path).iterdump())
    assert API_KEY not in dump


def test_limits_off_means_no_429(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", api_key=API_KEY, rate_limit_enabled=False, **LIMITS)
    container = build_container(settings, embedder=HashingEmbedder(), clock=ManualClock())
    try:
        with TestClient(build_embedded_app(settings, container), headers={"x-api-key": API_KEY}) as api:
            assert {api.get("/clients").status_code for _ in range(5)} == {200}
    finally:
        container.close()


@pytest.mark.parametrize(("method", "path", "bucket"), [
    ("GET", "/memory/search", "reads"),
    ("HEAD", "/clients", "reads"),
    ("POST", "/memory", "writes"),
    ("PUT", "/clients/acme", "writes"),
    ("PATCH", "/memory/x", "writes"),
    ("DELETE", "/memory/x", "writes"),
    ("POST", "/consolidate", "heavy"),
    ("POST", "/research/", "heavy"),
    ("POST", "/research/steps", "writes"),
    ("GET", "/health", None),
])
def test_budget_of_each_request(method: str, path: str, bucket: str | None) -> None:
    limit = limit_for(method, path, Settings())
    assert (limit.bucket if limit else None) == bucket


class UnreachableCounters:
    """A rate limiter whose backing store fails (e.g. DynamoDB throttling after botocore's retries)."""

    def hit(self, key: str, bucket: str, limit: int, window_seconds: int) -> int | None:
        raise ConnectionError("counter store unreachable")

    def refund(self, key: str, bucket: str, window_seconds: int) -> None:
        raise ConnectionError("counter store unreachable")


def test_an_unreachable_counter_store_lets_requests_through(
    limited: tuple[Settings, Container], caplog: pytest.LogCaptureFixture,
) -> None:
    settings, container = limited
    container.rate_limiter = UnreachableCounters()
    with TestClient(build_embedded_app(settings, container), headers={"x-api-key": API_KEY}) as api:
        statuses = [store(api, n) for n in range(5)]  # more than the write budget of 3

    assert statuses == [201] * 5
    assert "rate limiter unavailable" in caplog.text
    assert API_KEY not in caplog.text


def test_failed_heavy_requests_are_refunded(api: TestClient) -> None:
    # No LLM here: consolidation answers 503, research is switched off (503); a bad query parameter is a 400.
    statuses = [
        api.post("/consolidate").status_code,
        api.post("/research", json={"topic": "which decision superseded the cache?"}).status_code,
        api.post("/consolidate", params={"sync": "maybe"}).status_code,
        api.post("/consolidate").status_code,
    ]

    assert statuses == [503, 503, 400, 503]  # the budget is 1 per hour: without refunds the 2nd would be a 429


def test_a_heavy_request_that_succeeds_keeps_its_count(heavy_api: TestClient) -> None:
    assert heavy_api.post("/consolidate").status_code == 200
    assert_error(heavy_api.post("/research"), 429)
