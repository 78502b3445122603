"""The memory event stream and the audit as `ChatDataFunction` serves them behind API Gateway (DynamoDB on moto),
with the environment template.yaml gives it: each GET /api/v1/events/memories is a long poll that answers the
events after Last-Event-ID and ends (API Gateway buffers the response), so a client that reconnects with the last
id it saw gets every event once, in order; events a chat turn's function records (`memory.recalled`) are in the
same log. The audit lists requests either function served."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from zengram.assembly.provider import ContainerProvider

from tests.api.chat.test_events import parse_sse
from tests.functions.conftest import fresh_container_for
from tests.functions.invoke import invoke, load_event, load_function_module
from tests.infra.template_model import load_template
from tests.llm_server import TEST_LLM_KEY, ScriptedLLMServer


def template_window() -> str:
    variables = load_template()["Resources"]["ChatDataFunction"]["Properties"]["Environment"]["Variables"]
    window: str = variables["ZENGRAM_CHAT_EVENTS_WINDOW_SECONDS"]
    return window


@pytest.fixture
def provider(lambda_environment: str, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
             ) -> Iterator[ContainerProvider]:
    for name, value in {"ZENGRAM_CHAT_DEFAULT_BASE_URL": llm_server.url_for("local"),
                        "ZENGRAM_LLM_BASE_URL": llm_server.base_url, "ZENGRAM_LLM_API_KEY": TEST_LLM_KEY,
                        "ZENGRAM_CHAT_EVENTS_WINDOW_SECONDS": template_window(),
                        "ZENGRAM_CHAT_EVENTS_POLL_SECONDS": "0.05"}.items():
        monkeypatch.setenv(name, value)
    fresh = fresh_container_for("chat_data")
    load_function_module("chat").app.state.provider = fresh  # one table behind both functions, as deployed
    yield fresh
    fresh.close()


def call(relative: str, *, headers: dict[str, str] | None = None, body: Any = None) -> dict[str, Any]:
    event = load_event(relative)
    event["headers"].update(headers or {})
    if body is not None:
        event["body"] = json.dumps(body)
    response: dict[str, Any] = invoke(relative.split("/")[0], event)
    return response


def poll(last_event_id: str) -> list[dict[str, Any]]:
    response = call("chat_data/get_memory_events.json", headers={"last-event-id": last_event_id})
    assert response["statusCode"] == 200 and response["headers"]["content-type"].startswith("text/event-stream")
    events = parse_sse(response["body"])
    assert events[0]["event"] == "connected" and events[0]["data"]["last_event_id"] == int(last_event_id)
    return [event for event in events if event["event"].startswith("memory.")]


def test_a_long_poll_answers_the_events_after_last_event_id(provider: ContainerProvider,
                                                           llm_server: ScriptedLLMServer) -> None:
    assert template_window() == "20"
    first = call("chat_data/post_memory.json")
    assert first["statusCode"] == 201
    memory_id = json.loads(first["body"])["id"]
    assert [(e["id"], e["event"], e["data"]["id"]) for e in poll("0")] == [(1, "memory.created", memory_id)]

    llm_server.script("Try a mushroom risotto.", route="local")
    assert call("chat/post_completion.json", headers={"x-session-id": "tab-7"})["statusCode"] == 200
    resumed = poll("1")  # the reconnect: only what came after
    assert [(e["id"], e["event"], e["data"]["id"], e["data"]["chat_id"]) for e in resumed] == [
        (2, "memory.recalled", memory_id, "chat_sample")]

    audit = call("chat_data/get_audit_requests.json")
    assert audit["statusCode"] == 200
    rows = json.loads(audit["body"])["data"]
    assert [(row["route"], row["status"]) for row in rows] == [
        ("/api/v1/events/memories", 200), ("/api/v1/chat/completions", 200), ("/api/v1/events/memories", 200),
        ("/api/v1/memories", 201)]
    assert rows[1]["session_id"] == "tab-7" and rows[1]["subject_id"] == "user_123"
    assert "Italian" not in audit["body"]  # the turn's message: never in the audit
