"""A real embedded server (uvicorn on a free loopback port, HashingEmbedder, rate limits off) for the SDK,
MCP and CLI suites."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from zengram.bootstrap import Container
from zengram.client import BrainClient
from zengram.embedded.app import build_embedded_app
from zengram.embedded.background import BackgroundServer
from zengram.settings import Settings

from tests.support import API_KEY


@pytest.fixture
def live_server(settings: Settings, hashing_container: Container) -> Iterator[BackgroundServer]:
    assert not settings.rate_limit_enabled
    with BackgroundServer(build_embedded_app(settings, hashing_container)) as server:
        yield server


@pytest.fixture
def brain(live_server: BackgroundServer) -> Iterator[BrainClient]:
    with BrainClient(url=live_server.url, api_key=API_KEY, source_agent="sdk-test") as client:
        yield client


class SleepRecorder:
    """Stands in for time.sleep / asyncio.sleep: records the waits instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)

    async def asleep(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()
