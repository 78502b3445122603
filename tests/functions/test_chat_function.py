"""The chat layer's two functions answer their sample events on the DynamoDB host (moto): the data function subject
memories, records and the 501 of what the layer does not offer; the turn function state, prompts, completions (a
streamed one buffered whole, as API Gateway delivers it) that recall the memories the data function stored; and a
completion's learning job runs in the learning function, as Lambda's asynchronous invocation would run it."""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from zengram.adapters.aws_lambda import LambdaJobLauncher
from zengram.assembly.provider import ContainerProvider

from tests.functions.conftest import fresh_container_for
from tests.functions.invoke import FakeLambdaContext, invoke, load_event, load_function_module
from tests.llm_server import TEST_LLM_KEY, ScriptedLLMServer


@pytest.fixture
def provider(lambda_environment: str, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
             ) -> Iterator[ContainerProvider]:
    for name, value in {"ZENGRAM_CHAT_DEFAULT_BASE_URL": llm_server.url_for("local"),
                        "ZENGRAM_LLM_BASE_URL": llm_server.base_url, "ZENGRAM_LLM_API_KEY": TEST_LLM_KEY,
                        "ZENGRAM_LLM_MAX_RETRIES": "0", "ZENGRAM_CHAT_LEARNING_LAUNCHER": "lambda",
                        "ZENGRAM_CHAT_LEARNING_FUNCTION": "zengram-chat-learning:live"}.items():
        monkeypatch.setenv(name, value)
    fresh = fresh_container_for("chat")
    load_function_module("chat_data").app.state.provider = fresh  # one table and index behind both, as deployed
    yield fresh
    fresh.close()


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The job ids handed to Lambda's asynchronous invocation (no Lambda runs here; the test runs them)."""
    sent: list[str] = []
    monkeypatch.setattr(LambdaJobLauncher, "launch", lambda self, job_id, run_here: sent.append(job_id))
    return sent


def call(relative: str, **changes: Any) -> tuple[int, Any, dict[str, str]]:
    """A sample event (`<function>/<name>.json`) through the function it is deployed to."""
    event = load_event(relative)
    if "body" in changes:
        event["body"] = json.dumps(changes.pop("body"))
    event.update(changes)
    response = invoke(relative.split("/")[0], event)
    content_type = response["headers"].get("content-type", "")
    body = json.loads(response["body"]) if content_type.startswith("application/json") else response["body"]
    return response["statusCode"], body, response["headers"]


def test_memory_state_record_and_prompt_events(provider: ContainerProvider) -> None:
    status, created, _ = call("chat_data/post_memory.json")
    assert status == 201 and created["created"] is True
    assert type(provider.get().chat.memories._store).__name__ == "DynamoDBSubjectMemoryStore"
    status, listed, _ = call("chat_data/get_memories.json")
    assert status == 200 and [m["id"] for m in listed["data"]] == [created["id"]]
    status, found, _ = call("chat_data/get_memory_search.json")
    assert status == 200 and found["data"][0]["id"] == created["id"]
    assert call("chat/put_state.json")[0] == 200
    status, state, _ = call("chat/get_state.json")
    assert status == 200 and state["value"] == {"step": 3, "next": "book hotels"}
    assert call("chat_data/post_record_schema.json")[0] == 200
    status, prompt, _ = call("chat/post_prompt.json")
    assert status == 201 and prompt["prompt"]["is_default"] is True


def test_completion_events_through_api_gateway(provider: ContainerProvider, llm_server: ScriptedLLMServer) -> None:
    call("chat/post_prompt.json")
    call("chat_data/post_memory.json")
    llm_server.script("Try a mushroom risotto.", "A stream, all at once.", route="local")
    status, answer, headers = call("chat/post_completion.json")
    assert status == 200, answer
    assert answer["choices"][0]["message"]["content"] == "Try a mushroom risotto."
    assert headers["x-mnx-chat-id"] == "chat_sample" and headers["x-mnx-subject-id"] == "user_123"
    assert llm_server.calls_to("local")[-1].messages == [
        {"role": "system", "content": "You are a helpful support agent.\n\nRelevant memories about the user:\n- "
                                      "User is vegetarian and enjoys Italian cuisine"},
        {"role": "user", "content": "Which Italian dish should I cook tonight?"}]

    status, streamed, headers = call("chat/post_completion_stream.json")
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    events = [line.removeprefix("data: ") for line in streamed.split("\n\n") if line]
    assert events[-1] == "[DONE]"
    text = "".join(json.loads(e)["choices"][0]["delta"].get("content", "") for e in events[:-1])
    assert text == "A stream, all at once."
    assert llm_server.calls_to("local")[-1].messages[1:] == [  # the first turn is history now
        {"role": "user", "content": "Which Italian dish should I cook tonight?"},
        {"role": "assistant", "content": "Try a mushroom risotto."},
        {"role": "user", "content": "Which Italian dish should I cook tonight?"}]
    status, chats, _ = call("chat/get_history_list.json")
    assert status == 200 and chats["chats"][0]["message_count"] == 4
    status, trace, _ = call("chat/get_trace.json")
    assert status == 200 and [event["stream"] for event in trace["events"]] == [False, True]


def test_anthropic_message_events_through_api_gateway(provider: ContainerProvider,
                                                     llm_server: ScriptedLLMServer) -> None:
    call("chat_data/post_memory.json")
    llm_server.script("Try a mushroom risotto.", "Or a pesto pasta.", route="local")
    status, message, headers = call("chat/post_message.json")
    assert status == 200, message
    assert (message["type"], message["content"], message["stop_reason"]) == (
        "message", [{"type": "text", "text": "Try a mushroom risotto."}], "end_turn")
    assert message["mnx"]["chat_id"] == headers["x-mnx-chat-id"] == "chat_anthropic"
    assert llm_server.calls_to("local")[-1].messages == [
        {"role": "system", "content": "Answer in one sentence.\n\nRelevant memories about the user:\n- "
                                      "User is vegetarian and enjoys Italian cuisine"},
        {"role": "user", "content": "Which Italian dish should I cook tonight?"}]

    status, streamed, headers = call("chat/post_message_stream.json")  # buffered whole, as API Gateway delivers it
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    names = [block.split("\n")[0].removeprefix("event: ") for block in streamed.split("\n\n") if block]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    deltas = [json.loads(block.split("\n")[1].removeprefix("data: ")) for block in streamed.split("\n\n")
              if block.startswith("event: content_block_delta")]
    assert "".join(delta["delta"]["text"] for delta in deltas) == "Or a pesto pasta."
    assert llm_server.calls_to("local")[-1].messages[2] == {"role": "assistant", "content": "Try a mushroom risotto."}


def test_refusals(provider: ContainerProvider) -> None:
    status, body, _ = call("chat_data/post_memory_invalid.json")
    assert status == 400 and body["error"].startswith("text:")
    status, body, _ = call("chat_data/get_integrations_unsupported.json")
    assert status == 501 and "integrations: not supported" in body["error"]


def test_claims_are_served_by_the_data_function(provider: ContainerProvider) -> None:
    status, made, _ = call("chat_data/post_claim.json")
    assert status == 201 and (made["slot"], made["value"], made["status"]) == ("diet", "vegetarian", "active")
    status, truth, _ = call("chat_data/get_claims_truth.json")
    assert status == 200 and [(s["slot"], s["value"]) for s in truth["slots"]] == [("diet", "vegetarian")]
    status, profile, _ = call("chat_data/patch_profile.json")
    assert status == 200 and profile["claims"] == {"diet": "vegetarian", "timezone": "Europe/Lisbon"}


def test_learning_runs_in_the_learning_function(provider: ContainerProvider, llm_server: ScriptedLLMServer,
                                                queued: list[str]) -> None:
    learning = importlib.import_module("functions.chat_learning.app")
    learning.provider.close()  # a fresh execution environment
    try:
        llm_server.script("Noted.", route="local")
        llm_server.script({"memories": [{"text": "User cooks on weekends", "kind": "context"}]})
        status, _, _ = call("chat/post_completion.json", body={
            "model": "gpt-4o-mini", "messages": [{"role": "user", "content": "I cook on weekends."}],
            "mnx": {"subject_id": "user_123", "chat_id": "learn_here"}})
        assert status == 200 and len(queued) == 1
        outcome = learning.handler(load_event("chat_learning/run_job.json", zengram_job_id=queued[0]),
                                   FakeLambdaContext())
        assert outcome == {"job_id": queued[0], "status": "done"}
        memories = provider.get().chat.memories.of_subject("global", "user_123", limit=10, offset=0)
        assert [m.text for m in memories] == ["User cooks on weekends"]
        again = learning.handler(load_event("chat_learning/run_job.json", zengram_job_id=queued[0]),
                                 FakeLambdaContext())
        assert again["status"] == "not due"  # delivered twice (Lambda is at-least-once): run once
        swept = learning.handler(load_event("chat_learning/scheduled_sweep.json"), FakeLambdaContext())
        assert swept == {"ran": 0, "indexed": 0}
    finally:
        learning.provider.close()
