"""Retries: 429 waits what Retry-After says, connection failures back off, and only safe requests are
resent. A scripted transport answers in place of a server; waits are recorded, never slept."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest
from zengram.client import AsyncBrainClient, BrainClient, BrainConnectionError, RateLimitError
from zengram.client.retry import RetryPolicy, retry_after_seconds

from tests.clients.conftest import SleepRecorder

HEALTHY = {"status": "ok", "service": "zengram", "checks": {"records": "up", "search_index": "up", "embeddings": "up"},
           "timestamp": "2026-12-01T06:00:00.000Z"}
Step = httpx.Response | Exception


class Script:
    """Answers each request with the next step (a response, or an exception to raise)."""

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = self.steps.pop(0)
        if isinstance(step, Exception):
            raise step
        return step


def rate_limited(retry_after: str | None) -> httpx.Response:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return httpx.Response(429, json={"error": "rate limited: 60 writes per minute"}, headers=headers)


def sync_client(script: Script, sleeps: SleepRecorder, **options: object) -> BrainClient:
    return BrainClient(url="http://zengram.test", api_key="k", source_agent="t", transport=httpx.MockTransport(script),
                       sleep=sleeps, **options)  # type: ignore[arg-type]


def test_429_waits_for_retry_after_then_succeeds(sleeps: SleepRecorder) -> None:
    script = Script(rate_limited("2"), rate_limited("1"), httpx.Response(200, json=HEALTHY))

    with sync_client(script, sleeps) as brain:
        health = brain.health()

    assert health.status == "ok"
    assert sleeps.waits == [2.0, 1.0]
    assert len(script.requests) == 3


def test_429_without_usable_retry_after_backs_off(sleeps: SleepRecorder) -> None:
    script = Script(rate_limited(None), rate_limited("soon"), httpx.Response(200, json=HEALTHY))

    with sync_client(script, sleeps) as brain:
        brain.health()

    assert sleeps.waits == [0.5, 1.0]


def test_429_gives_up_with_the_servers_text_when_retries_run_out(sleeps: SleepRecorder) -> None:
    script = Script(*[rate_limited("1") for _ in range(3)])

    with pytest.raises(RateLimitError) as limited, sync_client(script, sleeps, max_retries=2) as brain:
        brain.store(type="event", content="x")

    assert limited.value.error == "rate limited: 60 writes per minute"
    assert limited.value.retry_after == 1.0
    assert sleeps.waits == [1.0, 1.0]


def test_429_asking_for_longer_than_the_client_accepts_fails_at_once(sleeps: SleepRecorder) -> None:
    script = Script(rate_limited("3600"))

    with pytest.raises(RateLimitError) as limited, sync_client(script, sleeps) as brain:
        brain.research("why?")

    assert limited.value.retry_after == 3600.0
    assert sleeps.waits == []


def test_retry_after_as_an_http_date() -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    seconds = retry_after_seconds(rate_limited(later))
    assert seconds is not None and 25 <= seconds <= 30


def test_connection_errors_back_off_exponentially(sleeps: SleepRecorder) -> None:
    refused = httpx.ConnectError("connection refused")
    script = Script(refused, refused, refused, httpx.Response(200, json=HEALTHY))

    with sync_client(script, sleeps, retry=RetryPolicy(max_retries=3, backoff=0.25, max_backoff=0.6)) as brain:
        brain.health()

    assert sleeps.waits == [0.25, 0.5, 0.6]


def test_a_write_that_may_have_reached_the_server_is_not_resent(sleeps: SleepRecorder) -> None:
    script = Script(httpx.ReadError("connection reset"), httpx.Response(201, json={}))

    with pytest.raises(BrainConnectionError, match="connection reset"), sync_client(script, sleeps) as brain:
        brain.store(type="event", content="exactly once")

    assert len(script.requests) == 1 and sleeps.waits == []


def test_a_read_that_broke_mid_way_is_resent(sleeps: SleepRecorder) -> None:
    script = Script(httpx.ReadError("connection reset"), httpx.Response(200, json=HEALTHY))

    with sync_client(script, sleeps) as brain:
        brain.health()

    assert len(script.requests) == 2


def test_errors_that_are_not_json_keep_the_body_text(sleeps: SleepRecorder) -> None:
    script = Script(httpx.Response(502, text="Bad Gateway from the proxy"))

    with pytest.raises(Exception, match="HTTP 502: Bad Gateway from the proxy"), sync_client(script, sleeps) as brain:
        brain.health()


def test_async_client_retries_the_same_way(sleeps: SleepRecorder) -> None:
    script = Script(httpx.ConnectError("refused"), rate_limited("3"), httpx.Response(200, json=HEALTHY))

    async def scenario() -> str:
        async with AsyncBrainClient(url="http://zengram.test", api_key="k", transport=httpx.MockTransport(script),
                                    sleep=sleeps.asleep) as brain:
            return (await brain.health()).status

    assert asyncio.run(scenario()) == "ok"
    assert sleeps.waits == [0.5, 3.0]


def test_every_request_carries_the_key_and_the_request_id(sleeps: SleepRecorder) -> None:
    script = Script(httpx.Response(200, json=HEALTHY, headers={"x-request-id": "abc"}))

    with sync_client(script, sleeps, request_id="abc") as brain:
        brain.health()

    sent = script.requests[0]
    assert sent.headers["x-api-key"] == "k" and sent.headers["x-request-id"] == "abc"
    assert brain.last_request_id == "abc"

