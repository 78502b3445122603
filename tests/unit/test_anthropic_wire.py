"""The Anthropic Messages translation (`chat/domain/anthropic_requests.py`, `anthropic_replies.py`): what the SDK
test does not reach — images, several text blocks, refusals of untranslatable blocks, a provider breaking off."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError
from zengram.chat.domain.anthropic_replies import MessageStream, message_of
from zengram.chat.domain.anthropic_requests import MessagesRequest
from zengram.kernel.errors import InvalidInput
from zengram.kernel.validation import describe_validation_errors


def translated(**fields: Any) -> dict[str, Any]:
    request = MessagesRequest.model_validate({"model": "claude-x", "max_tokens": 10, **fields})
    return request.as_chat_completion().model_dump(exclude_none=True)


def test_system_blocks_text_blocks_and_images_become_chat_completion_parts() -> None:
    body = translated(system=[{"type": "text", "text": "One."}, {"type": "text", "text": "Two."}],
                      stop_sequences=["END"], metadata={"user_id": "u1"}, top_k=5, messages=[
                          {"role": "user", "content": [
                              {"type": "text", "text": "Look:"},
                              {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAA"}},
                              {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}]},
                          {"role": "assistant", "content": [{"type": "text", "text": "A"},
                                                            {"type": "text", "text": "B"}]}])
    assert body["messages"] == [
        {"role": "system", "content": "One.\n\nTwo."},
        {"role": "user", "content": [{"type": "text", "text": "Look:"},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}},
                                     {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]},
        {"role": "assistant", "content": "A\nB"}]
    assert (body["stop"], body["user"], body["max_tokens"]) == (["END"], "u1", 10)
    assert "top_k" not in body


@pytest.mark.parametrize(("fields", "named"), [
    ({"system": [{"type": "image", "source": {}}]}, "system.list[TextBlock].0.type: Input should be 'text'"),
    ({"messages": [{"role": "user", "content": [{"type": "thinking", "thinking": "…"}]}]},
     "Input tag 'thinking' found using 'type' does not match any of the expected tags: 'text', 'image', 'tool_result'"),
    ({"messages": [{"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t"}]}]},
     "Input tag 'tool_result' found using 'type' does not match any of the expected tags: 'text', 'tool_use'"),
    ({"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [
        {"type": "image", "source": {}}]}]}]}, "tool_result.content.list[TextBlock].0.type: Input should be 'text'"),
    ({"messages": [{"role": "user", "content": [{"type": "text"}]}]}, "text.text: Field required"),
    ({"tools": [{"type": "web_search_20250305", "name": "web_search"}]}, "tools.0.type: Input should be 'custom'"),
    ({"tools": [{"name": "f"}]}, "tools.0.input_schema: Field required"),
    ({"tool_choice": {"type": "sometimes"}}, "tool_choice: Input tag 'sometimes'"),
])
def test_what_the_chat_completions_wire_cannot_say_is_refused_by_name(fields: dict[str, Any], named: str) -> None:
    with pytest.raises(ValidationError) as refused:
        translated(**{"messages": [{"role": "user", "content": "hi"}], **fields})
    assert named in describe_validation_errors(refused.value.errors())


def test_tool_choices_and_a_users_tool_results() -> None:
    tool = {"name": "f", "input_schema": {"type": "object"}}
    for choice, expected in (({"type": "auto"}, "auto"), ({"type": "any"}, "required"), ({"type": "none"}, "none"),
                             ({"type": "tool", "name": "f"}, {"type": "function", "function": {"name": "f"}})):
        assert translated(messages=[{"role": "user", "content": "hi"}], tools=[tool],
                          tool_choice=choice)["tool_choice"] == expected
    body = translated(tools=[tool], tool_choice={"type": "auto", "disable_parallel_tool_use": True}, messages=[
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}, {"type": "text", "text": "thanks"}]}])
    assert body["parallel_tool_calls"] is False
    assert body["messages"] == [{"role": "tool", "tool_call_id": "t1", "content": "a\nb"},
                                {"role": "user", "content": "thanks"}]


def test_text_too_long_once_joined_is_invalid_input_not_a_crash() -> None:
    long = "x" * 150_000
    with pytest.raises(InvalidInput, match="messages"):
        translated(messages=[{"role": "user", "content": [{"type": "text", "text": long},
                                                          {"type": "text", "text": long}]}])


def test_a_whole_answer_maps_finish_reasons_and_estimates_missing_usage() -> None:
    answer = {"choices": [{"message": {"role": "assistant", "content": "Hello there"}, "finish_reason": "length"}],
              "mnx": {"chat_id": "c"}}
    message = message_of(answer, "claude-x")
    assert (message["model"], message["stop_reason"], message["mnx"]) == ("claude-x", "max_tokens", {"chat_id": "c"})
    assert message["usage"] == {"input_tokens": 0, "output_tokens": 3}
    assert message["id"].startswith("msg_")


def parse(events: list[str]) -> list[tuple[str, dict[str, Any]]]:
    parsed = []
    for raw in events:
        name_line, data_line = raw.strip().split("\n")
        parsed.append((name_line.removeprefix("event: "), json.loads(data_line.removeprefix("data: "))))
    return parsed


def test_a_provider_breaking_off_ends_the_stream_with_an_error_event() -> None:
    chunks: list[dict[str, Any]] = [{"id": "c1", "choices": [{"delta": {"content": "Hel"}}]},
                                    {"error": {"message": "provider gone"}}]
    events = parse(list(MessageStream("claude-x").events(iter(chunks))))
    assert [name for name, _ in events] == ["message_start", "content_block_start", "content_block_delta",
                                            "content_block_stop", "error"]
    assert events[-1][1] == {"type": "error", "error": {"type": "api_error", "message": "provider gone"}}


def test_an_empty_stream_still_starts_and_stops_the_message() -> None:
    events = parse(list(MessageStream("claude-x").events(iter([]))))
    assert [name for name, _ in events] == ["message_start", "message_delta", "message_stop"]
    assert events[1][1]["delta"]["stop_reason"] == "end_turn"
