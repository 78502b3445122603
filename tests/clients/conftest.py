"""A real embedded server (uvicorn on a free loopback port, HashingEmbedder, rate limits off) for the SDK,
MCP and CLI suites; `llm_live_server` is the same with the scripted LLM and research switched on."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from zengram.assembly.containers import Container, build_container
from zengram.client import BrainClient
from zengram.embedded.app import build_embedded_app
from zengram.embedded.background import BackgroundServer
from zengram.settings import Settings

from tests.support import API_KEY, HashingEmbedder, TickingClock

EMPTY_PLAN = {"merged_facts": [], "contradictions": [], "connections": [], "summaries": [], "categories": []}


@pytest.fixture
def live_server(settings: Settings, hashing_container: Container) -> Iterator[BackgroundServer]:
    assert not settings.rate_limit_enabled
    with BackgroundServer(build_embedded_app(settings, hashing_container)) as server:
        yield server


@pytest.fixture
def llm_live_server(llm_settings: Settings) -> Iterator[BackgroundServer]:
    """A running server whose LLM is the scripted chat server (`llm_server`), with RESEARCH_ENABLED=true."""
    settings = llm_settings.model_copy(update={"research_enabled": True})
    container = build_container(settings, embedder=HashingEmbedder(), clock=TickingClock())
    try:
        with BackgroundServer(build_embedded_app(settings, container)) as server:
            yield server
    finally:
        container.close()


@pytest.fixture
def brain(live_server: BackgroundServer) -> Iterator[BrainClient]:
    with BrainClient(url=live_server.url, api_key=API_KEY, source_agent="sdk-test") as client:
        yield client


def free_port() -> int:
    """A loopback port nothing listens on (once the probe is closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


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
