"""Fixtures of the chat layer's API suites: the embedded app with its providers on the scripted model server.

Routes of `llm_server`: "openai", "anthropic", "google" stand for the providers (their base URLs point there),
"local" for the default provider, and the unnamed route is the deployment's own LLM, which learning uses; it answers
`{"memories": []}` unless a test scripts it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import Container, build_container
from zengram.embedded.app import build_embedded_app
from zengram.kernel.ports import Embedder
from zengram.settings import Settings

from tests.llm_server import ScriptedLLMServer
from tests.support import API_KEY, ManualClock

OPENAI_KEY = "sk-caller-openai-key-0123456789abcdef"
ANTHROPIC_KEY = "sk-ant-caller-key-0123456789abcdef"
GOOGLE_KEY = "AIzaCallerGoogleKey0123456789abcdef"
NO_LEARNING: dict[str, Any] = {"memories": []}


def chat_settings_for(settings: Settings, server: ScriptedLLMServer, **changes: Any) -> Settings:
    """`settings` (already pointed at the scripted server as the deployment's LLM) with the providers there too."""
    return settings.model_copy(update={
        "chat_openai_base_url": server.url_for("openai"), "chat_anthropic_base_url": server.url_for("anthropic"),
        "chat_google_base_url": server.url_for("google"), "chat_learning_retry_seconds": 0.001,
        "chat_learning_sweep_seconds": 0.05, **changes})


class ChatClock(ManualClock):
    """Ticks a millisecond per reading (every write its own moment) and can jump ahead (TTLs, decay)."""

    def now(self) -> Any:
        return self.advance(milliseconds=1)


@pytest.fixture
def chat_clock() -> ChatClock:
    return ChatClock()


@pytest.fixture
def chat_settings(llm_settings: Settings, llm_server: ScriptedLLMServer) -> Settings:
    llm_server.default(NO_LEARNING)
    return chat_settings_for(llm_settings, llm_server)


@pytest.fixture
def chat_container(chat_settings: Settings, minilm: Embedder, chat_clock: ChatClock) -> Iterator[Container]:
    built = build_container(chat_settings, embedder=minilm, clock=chat_clock)
    yield built
    built.close()


@pytest.fixture
def api(chat_settings: Settings, chat_container: Container) -> Iterator[TestClient]:
    """The embedded app, authenticated the Mnexium SDK's way (x-mnexium-key)."""
    with TestClient(build_embedded_app(chat_settings, chat_container), headers={"x-mnexium-key": API_KEY}) as client:
        yield client


def complete(client: TestClient, content: str | list[dict[str, Any]], *, key: str | None = OPENAI_KEY,
             model: str = "gpt-4o-mini", expect: int = 200, headers: dict[str, str] | None = None,
             **mnx: Any) -> dict[str, Any]:
    """One non-streaming completion; `content` is the user's message (or the whole message list)."""
    messages = [{"role": "user", "content": content}] if isinstance(content, str) else content
    sent = {**({"x-openai-key": key} if key else {}), **(headers or {})}
    response = client.post("/api/v1/chat/completions", headers=sent,
                           json={"model": model, "messages": messages, "mnx": mnx})
    assert response.status_code == expect, response.text
    body: dict[str, Any] = response.json()
    return body


def wait_for_learning(client: TestClient, chat_id: str | None = None, *, settled: tuple[str, ...] = ("done", "failed"),
                      deadline: float = 60.0) -> list[dict[str, Any]]:
    """The chat's learning jobs once none is pending or running (the worker runs them in the background). The
    deadline only stops a stuck run; it asserts nothing about speed."""
    stop = time.monotonic() + deadline
    while True:
        jobs: list[dict[str, Any]] = client.get("/api/v1/chat/learning", params={
            **({"chat_id": chat_id} if chat_id else {})}).json()["jobs"]
        if all(job["status"] in settled for job in jobs) or time.monotonic() > stop:
            return jobs
        time.sleep(0.05)
