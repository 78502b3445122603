"""POST /api/v1/messages driven by the official `anthropic` SDK (PyPI, unchanged) pointed at a live embedded server:
the same context assembly, history and learning as /chat/completions, answered in Anthropic's shape, whole and as
Anthropic's stream events. The provider is the scripted model server's "anthropic" route (Anthropic's
OpenAI-compatible endpoint as the layer calls it); learning asks the unnamed route. The Mnexium SDK 0.2 has no
Anthropic Messages path of its own (it always posts to /chat/completions), so the anthropic SDK is the client here.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import pytest
from mnexium import (
    ChatCompletionOptions,
    ChatCompletionResponse,
    ChatMessage,
    Mnexium,
    ProcessOptions,
    ProcessResponse,
    ProviderConfig,
)
from zengram.assembly.containers import build_container
from zengram.embedded.app import build_embedded_app
from zengram.embedded.background import BackgroundServer
from zengram.kernel.ports import Embedder
from zengram.settings import Settings

from tests.api.chat.conftest import ANTHROPIC_KEY, NO_LEARNING, ChatClock, chat_settings_for
from tests.llm_server import AssistantMessage, ScriptedLLMServer
from tests.support import API_KEY

MODEL = "claude-sonnet-4-5"
MEMORY = "Alice is vegetarian and loves Portuguese food"
QUESTION = "What Portuguese food should I eat tonight?"
STREAM_EVENTS = ["message_start", "content_block_start", "content_block_delta", "content_block_stop",
                 "message_delta", "message_stop"]


@pytest.fixture
def server(llm_settings: Settings, llm_server: ScriptedLLMServer, minilm: Embedder) -> Iterator[BackgroundServer]:
    llm_server.default(NO_LEARNING)
    settings = chat_settings_for(llm_settings, llm_server)
    container = build_container(settings, embedder=minilm, clock=ChatClock())
    try:
        with BackgroundServer(build_embedded_app(settings, container)) as running:
            yield running
    finally:
        container.close()


@pytest.fixture
def claude(server: BackgroundServer) -> Iterator[anthropic.Anthropic]:
    """The SDK as an Anthropic user configures it: our base URL up to /api (the SDK adds /v1/messages), a Zengram
    key as api_key (sent as x-api-key), the caller's own Anthropic key in x-anthropic-key."""
    with anthropic.Anthropic(base_url=f"{server.url}/api", api_key=API_KEY, max_retries=0,
                             default_headers={"x-anthropic-key": ANTHROPIC_KEY}) as client:
        yield client


@pytest.fixture
def http(server: BackgroundServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{server.url}/api/v1", headers={"x-mnexium-key": API_KEY}) as client:
        yield client


def wait_for_learning(http: httpx.Client, chat_id: str) -> list[str]:
    """The statuses of the chat's learning jobs once all settled (the deadline only ends a stuck run)."""
    stop = time.monotonic() + 60
    while True:
        jobs: list[dict[str, Any]] = http.get("/chat/learning", params={"chat_id": chat_id}).json()["jobs"]
        if (jobs and all(job["status"] in ("done", "failed") for job in jobs)) or time.monotonic() > stop:
            return [job["status"] for job in jobs]
        time.sleep(0.05)


def memories_of(http: httpx.Client, subject: str) -> set[str]:
    return {row["text"] for row in http.get("/memories", params={"subject_id": subject}).json()["data"]}


def test_a_message_recalls_memories_into_the_system_field_and_learns(
        claude: anthropic.Anthropic, http: httpx.Client, llm_server: ScriptedLLMServer) -> None:
    assert http.post("/memories", json={"subject_id": "alice", "text": MEMORY}).status_code == 201
    llm_server.script("Try the vegetarian feijoada.", route="anthropic")
    llm_server.script({"memories": [{"text": "Alice is eating out tonight", "kind": "fact"}]})  # learning

    message = claude.messages.create(
        model=MODEL, max_tokens=200, system=[{"type": "text", "text": "Be brief."}],
        messages=[{"role": "user", "content": [{"type": "text", "text": QUESTION}]}],
        extra_body={"mnx": {"subject_id": "alice", "chat_id": "c1", "recall": True, "learn": "force",
                            "system_prompt": False}})

    assert isinstance(message, anthropic.types.Message)
    assert [(block.type, getattr(block, "text", None)) for block in message.content] == [
        ("text", "Try the vegetarian feijoada.")]
    assert (message.role, message.stop_reason, message.usage.output_tokens) == ("assistant", "end_turn", 1)
    extra = message.model_extra or {}
    assert (extra["mnx"]["subject_id"], extra["mnx"]["chat_id"]) == ("alice", "c1")
    call = llm_server.calls_to("anthropic")[-1]
    assert call.headers["authorization"] == f"Bearer {ANTHROPIC_KEY}"
    assert (call.body["model"], call.body["max_tokens"]) == (MODEL, 200)
    assert call.messages == [
        {"role": "system", "content": f"Be brief.\n\nRelevant memories about the user:\n- {MEMORY}"},
        {"role": "user", "content": QUESTION}]
    assert wait_for_learning(http, "c1") == ["done"]
    assert "Alice is eating out tonight" in memories_of(http, "alice")
    history = http.get("/chat/history/read", params={"subject_id": "alice", "chat_id": "c1"}).json()["data"]
    assert [(m["role"], m["message"]) for m in history] == [
        ("user", QUESTION), ("assistant", "Try the vegetarian feijoada.")]


def test_a_streamed_message_sends_anthropics_events_replays_history_and_learns(
        claude: anthropic.Anthropic, http: httpx.Client, llm_server: ScriptedLLMServer) -> None:
    llm_server.script("Hello Alice.", route="anthropic")
    claude.messages.create(model=MODEL, max_tokens=50, messages=[{"role": "user", "content": "Hi, I am Alice."}],
                           extra_body={"mnx": {"subject_id": "alice", "chat_id": "c2", "learn": False}})
    llm_server.script("Grilled sardines are the classic, but as a vegetarian try caldo verde.", route="anthropic")
    llm_server.script({"memories": [{"text": "Alice is in Lisbon", "kind": "fact"}]})

    seen: list[str] = []
    with claude.messages.stream(model=MODEL, max_tokens=200, system="Answer in one sentence.",
                                messages=[{"role": "user", "content": "I'm in Lisbon. What is typical?"}],
                                extra_body={"mnx": {"subject_id": "alice", "chat_id": "c2",
                                                    "learn": "force"}}) as stream:
        text = ""
        for event in stream:
            seen.append(event.type)
            if event.type == "text":
                text += event.text
        final = stream.get_final_message()

    said = "Grilled sardines are the classic, but as a vegetarian try caldo verde."
    assert text == said
    assert [block.text for block in final.content if block.type == "text"] == [said]
    assert final.stop_reason == "end_turn" and final.usage.output_tokens > 0
    raw = [kind for kind in seen if kind in STREAM_EVENTS]
    assert raw[:2] == STREAM_EVENTS[:2] and raw[-3:] == STREAM_EVENTS[-3:]
    assert set(raw[2:-3]) == {"content_block_delta"} and len(raw) > len(STREAM_EVENTS)
    call = llm_server.calls_to("anthropic")[-1]
    assert call.body["stream"] is True
    assert call.messages == [{"role": "system", "content": "Answer in one sentence."},
                             {"role": "user", "content": "Hi, I am Alice."},
                             {"role": "assistant", "content": "Hello Alice."},
                             {"role": "user", "content": "I'm in Lisbon. What is typical?"}]
    assert wait_for_learning(http, "c2") == ["done"]
    assert "Alice is in Lisbon" in memories_of(http, "alice")
    history = http.get("/chat/history/read", params={"subject_id": "alice", "chat_id": "c2"}).json()["data"]
    assert [m["message"] for m in history][-1] == said


def test_tool_use_round_trips_as_anthropic_blocks(claude: anthropic.Anthropic, llm_server: ScriptedLLMServer) -> None:
    weather: anthropic.types.ToolParam = {"name": "get_weather", "description": "Weather in a city",
               "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}
    llm_server.script(AssistantMessage(tool_calls=[{"id": "call_1", "name": "get_weather",
                                                    "arguments": {"city": "Lisbon"}}]), route="anthropic")
    asked = claude.messages.create(model=MODEL, max_tokens=100, tools=[weather],
                                   tool_choice={"type": "any"},
                                   messages=[{"role": "user", "content": "Weather in Lisbon?"}],
                                   extra_body={"mnx": {"subject_id": "bob", "learn": False, "log": False}})
    assert asked.stop_reason == "tool_use"
    use = asked.content[0]
    assert isinstance(use, anthropic.types.ToolUseBlock)
    assert (use.type, use.id, use.name, use.input) == ("tool_use", "call_1", "get_weather", {"city": "Lisbon"})
    sent = llm_server.calls_to("anthropic")[-1].body
    assert sent["tools"] == [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather in a city", "parameters": weather["input_schema"]}}]
    assert sent["tool_choice"] == "required"
    llm_server.script(AssistantMessage(content="Let me look.", tool_calls=[
        {"id": "call_2", "name": "get_weather", "arguments": {"city": "Porto"}}]), route="anthropic")
    with claude.messages.stream(model=MODEL, max_tokens=100, tools=[weather],
                                messages=[{"role": "user", "content": "And in Porto?"}],
                                extra_body={"mnx": {"subject_id": "bob", "learn": False, "log": False}}) as stream:
        streamed = stream.get_final_message()
    assert streamed.stop_reason == "tool_use"
    assert [(b.type, getattr(b, "text", None), getattr(b, "input", None)) for b in streamed.content] == [
        ("text", "Let me look.", None), ("tool_use", None, {"city": "Porto"})]

    llm_server.script("Sunny, 24°C.", route="anthropic")
    answered = claude.messages.create(model=MODEL, max_tokens=100, messages=[
        {"role": "user", "content": "Weather in Lisbon?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "get_weather",
                                           "input": {"city": "Lisbon"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "sunny, 24"}]}],
        extra_body={"mnx": {"subject_id": "bob", "learn": False, "log": False}})
    assert answered.content[0].type == "text" and answered.content[0].text == "Sunny, 24°C."
    assert llm_server.calls_to("anthropic")[-1].messages[1:] == [
        {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "get_weather", "arguments": json.dumps({"city": "Lisbon"})}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 24"}]


def test_the_mnexium_sdks_own_anthropic_path(server: BackgroundServer, http: httpx.Client,
                                            llm_server: ScriptedLLMServer) -> None:
    """The Mnexium SDK 0.2 reaches Anthropic through /chat/completions: a claude model and an `anthropic` provider
    config send x-anthropic-key, so the layer calls the Anthropic provider, with the same recall."""
    assert http.post("/memories", json={"subject_id": "carol", "text": MEMORY}).status_code == 201
    llm_server.script("Caldo verde.", "Pastel de nata.", route="anthropic")
    with Mnexium(api_key=API_KEY, base_url=f"{server.url}/api/v1", anthropic=ProviderConfig(api_key=ANTHROPIC_KEY),
                 max_retries=0) as mnx:
        answer = mnx.process(ProcessOptions(content=QUESTION, model=MODEL, subject_id="carol", recall=True,
                                            learn=False, system_prompt=False))
        chat = mnx.chat.completions.create(ChatCompletionOptions(
            model=MODEL, anthropic_key=ANTHROPIC_KEY, subject_id="carol", learn=False, history=False,
            messages=[ChatMessage(role="user", content="And dessert?")]))
    assert isinstance(answer, ProcessResponse) and answer.content == "Caldo verde."
    first, second = llm_server.calls_to("anthropic")[-2:]
    assert first.headers["authorization"] == second.headers["authorization"] == f"Bearer {ANTHROPIC_KEY}"
    assert first.messages == [{"role": "system", "content": f"Relevant memories about the user:\n- {MEMORY}"},
                              {"role": "user", "content": QUESTION}]
    assert second.messages[-1] == {"role": "user", "content": "And dessert?"}
    assert isinstance(chat, ChatCompletionResponse) and chat.choices[0].message.content == "Pastel de nata."


def test_refusals_reach_the_sdk_as_its_errors(claude: anthropic.Anthropic, server: BackgroundServer,
                                              llm_server: ScriptedLLMServer) -> None:
    with pytest.raises(anthropic.BadRequestError, match=r"Input tag 'document' found using 'type' does not match"):
        claude.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": [
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "x"}}]}])
    with anthropic.Anthropic(base_url=f"{server.url}/api", api_key="zg-not-a-key", max_retries=0) as stranger, \
            pytest.raises(anthropic.AuthenticationError):
        stranger.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    assert llm_server.calls_to("anthropic") == []
