"""Retries against real HTTP servers: the embedded server's own rate limiter answering 429 + Retry-After
(the SDK's wait moves the server's clock instead of sleeping), and real TCP connections that are refused
or dropped (a loopback proxy in front of the server)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from zengram.assembly.containers import build_container
from zengram.client import AsyncBrainClient, BrainClient, BrainConnectionError, RateLimitError
from zengram.embedded.app import build_embedded_app
from zengram.embedded.background import BackgroundServer
from zengram.settings import Settings

from tests.clients.conftest import free_port
from tests.support import API_KEY, HashingEmbedder, ManualClock


class ClockSleeper:
    """The SDK's sleep: records each wait and moves the server's clock by it, so a retry after
    `Retry-After` seconds meets the next rate-limit window without the test waiting."""

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.clock.advance(seconds=seconds)

    async def asleep(self, seconds: float) -> None:
        self(seconds)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()  # frozen: the rate-limit window only turns when the SDK's wait moves it


@pytest.fixture
def limited_server(tmp_path: Path, clock: ManualClock) -> Iterator[BackgroundServer]:
    settings = Settings(data_dir=tmp_path / "limited", api_key=API_KEY, rate_limit_enabled=True,
                        rate_limit_writes_per_minute=1)
    container = build_container(settings, embedder=HashingEmbedder(), clock=clock)
    try:
        with BackgroundServer(build_embedded_app(settings, container)) as server:
            yield server
    finally:
        container.close()


def seconds_left_in_minute(clock: ManualClock) -> int:
    now = clock.now().timestamp()
    return max(1, int((now // 60) * 60 + 60 - now))


def test_sync_client_waits_the_servers_retry_after_then_succeeds(
    limited_server: BackgroundServer, clock: ManualClock
) -> None:
    clock.advance(seconds=37)  # 23 s left in the minute, as in the example of docs/api/README.md
    sleeper = ClockSleeper(clock)
    with BrainClient(url=limited_server.url, api_key=API_KEY, source_agent="t", sleep=sleeper) as brain:
        first = brain.store(type="event", content="First write of the minute")
        expected = seconds_left_in_minute(clock)
        second = brain.store(type="event", content="Second write, over budget until the window turns")
        assert brain.get(second.id).content.startswith("Second write")

    assert first.id != second.id
    assert sleeper.waits == [float(expected)] and expected == 23


def test_without_retries_the_429_carries_the_servers_text_and_retry_after(
    limited_server: BackgroundServer, clock: ManualClock
) -> None:
    sleeper = ClockSleeper(clock)
    with BrainClient(url=limited_server.url, api_key=API_KEY, source_agent="t", max_retries=0,
                     sleep=sleeper) as brain:
        brain.store(type="event", content="Uses the minute's only write")
        with pytest.raises(RateLimitError) as limited:
            brain.store(type="event", content="Refused")

    assert limited.value.retry_after == seconds_left_in_minute(clock)
    assert limited.value.error.startswith("rate limit: at most 1 writes per minute per API key; retry in")
    assert limited.value.request_id and sleeper.waits == []


def test_async_client_waits_the_servers_retry_after_too(limited_server: BackgroundServer, clock: ManualClock) -> None:
    sleeper = ClockSleeper(clock)

    async def scenario() -> list[str]:
        async with AsyncBrainClient(url=limited_server.url, api_key=API_KEY, source_agent="t",
                                    sleep=sleeper.asleep) as brain:
            return [(await brain.store(type="event", content=f"Async write {n}")).id for n in range(2)]

    expected = seconds_left_in_minute(clock)
    ids = asyncio.run(scenario())

    assert len(set(ids)) == 2 and sleeper.waits == [float(expected)]


class FlakyProxy(socketserver.ThreadingTCPServer):
    """A TCP proxy to `upstream` that drops its first `drop` connections after reading what was sent."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int, upstream: int, drop: int = 0) -> None:
        self.upstream, self.drop, self.connections = upstream, drop, 0
        super().__init__(("127.0.0.1", port), _Pipe)
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class _Pipe(socketserver.BaseRequestHandler):
    server: FlakyProxy

    def handle(self) -> None:
        self.server.connections += 1
        if self.server.connections <= self.server.drop:
            self.request.recv(65536)  # the request reached us; answer nothing
            return
        with socket.create_connection(("127.0.0.1", self.server.upstream)) as upstream:
            forward = threading.Thread(target=_copy, args=(self.request, upstream), daemon=True)
            forward.start()
            _copy(upstream, self.request)
            forward.join(timeout=5)


def _copy(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def test_a_refused_connection_backs_off_until_the_server_is_up(live_server: BackgroundServer) -> None:
    """Nothing listens at first; during the SDK's first back-off the proxy starts on that port. A POST may
    be retried here: a refused connection never reached the server."""
    port, proxies, waits = free_port(), [], []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 2:
            proxies.append(FlakyProxy(port, live_server.port))

    try:
        with BrainClient(url=f"http://127.0.0.1:{port}", api_key=API_KEY, source_agent="t", sleep=sleep) as brain:
            stored = brain.store(type="event", content="Stored once the server answered")
            count = brain.query("events").count
    finally:
        for proxy in proxies:
            proxy.stop()

    assert waits == [0.5, 1.0]
    assert count == 1 and stored.deduplicated is False


def test_a_dropped_read_is_resent_and_a_dropped_write_is_not(live_server: BackgroundServer) -> None:
    proxy = FlakyProxy(free_port(), live_server.port, drop=1)
    waits: list[float] = []
    try:
        with BrainClient(url=f"http://127.0.0.1:{proxy.server_address[1]}", api_key=API_KEY, source_agent="t",
                         sleep=waits.append) as brain:
            stats = brain.stats()  # first connection dropped: a GET is safe to send again
            assert (proxy.connections, waits) == (2, [0.5])
            proxy.drop, proxy.connections = 1, 0
            with pytest.raises(BrainConnectionError) as dropped, BrainClient(
                url=brain.url, api_key=API_KEY, source_agent="t", sleep=waits.append
            ) as fresh:
                fresh.store(type="event", content="Maybe stored, so never sent twice")
            assert proxy.connections == 1 and waits == [0.5]
            assert brain.query("events").count == 0  # the proxy kept it from the server
    finally:
        proxy.stop()

    assert stats.total_memories == 0
    assert "POST /memory" in dropped.value.error
