"""`POST /api/v1/messages`: the provider's chat-completions answer in Anthropic's Messages shape, whole
(`message_of`) or as Anthropic's server-sent events (`MessageStream`: message_start, content_block_start,
content_block_delta, content_block_stop, message_delta, message_stop; `error` when the provider broke off)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

from zengram.chat.domain.tokens import estimate_tokens

STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "function_call": "tool_use",
                "content_filter": "refusal"}


def stop_reason(finish_reason: Any) -> str:
    return STOP_REASONS.get(str(finish_reason), "end_turn")


def message_id(answer: Mapping[str, Any]) -> str:
    """Anthropic's ids start with msg_; the provider's own id is kept after it when it has one."""
    own = answer.get("id")
    return f"msg_{own}" if isinstance(own, str) and own else f"msg_{uuid.uuid4().hex}"


def message_of(answer: Mapping[str, Any], model: str) -> dict[str, Any]:
    """A whole chat-completions answer (with the layer's `mnx`) as an Anthropic message (with the same `mnx`)."""
    choices = answer.get("choices")
    choice = _dict(choices[0]) if isinstance(choices, list) and choices else {}
    said = _dict(choice.get("message"))
    text = said["content"] if isinstance(said.get("content"), str) else ""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content.extend(_tool_use(call) for call in said.get("tool_calls") or [] if isinstance(call, dict))
    usage = _dict(answer.get("usage"))
    message = {"id": message_id(answer), "type": "message", "role": "assistant",
               "model": answer.get("model") if isinstance(answer.get("model"), str) else model,
               "content": content, "stop_reason": stop_reason(choice.get("finish_reason")), "stop_sequence": None,
               "usage": {"input_tokens": _count(usage.get("prompt_tokens")),
                         "output_tokens": _count(usage.get("completion_tokens"), estimate_tokens(text))}}
    return {**message, **({"mnx": answer["mnx"]} if "mnx" in answer else {})}


def _tool_use(call: Mapping[str, Any]) -> dict[str, Any]:
    function = _dict(call.get("function"))
    return {"type": "tool_use", "id": str(call.get("id") or f"toolu_{uuid.uuid4().hex}"),
            "name": str(function.get("name") or ""), "input": _arguments(function.get("arguments"))}


def _arguments(arguments: Any) -> Any:
    """A tool call's arguments as the object Anthropic's `input` is (a model's unparsable JSON kept as text)."""
    if not isinstance(arguments, str) or not arguments.strip():
        return {}
    try:
        return json.loads(arguments)
    except ValueError:
        return {"arguments": arguments}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _count(value: Any, fallback: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else fallback


def event(name: str, data: Mapping[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(dict(data), ensure_ascii=False)}\n\n"


class MessageStream:
    """Turns chat-completions chunks into Anthropic's stream events, one content block open at a time: a text
    block while text arrives, a tool_use block per tool call (its arguments as input_json_delta)."""

    def __init__(self, model: str) -> None:
        self._model = model
        self._index = -1  # the open block's index; -1 before the first
        self._open: str | None = None  # "text", or the provider's tool-call index as "tool:<n>"
        self._finish: Any = None
        self._usage: dict[str, Any] = {}
        self._text: list[str] = []

    def events(self, chunks: Iterator[Mapping[str, Any]]) -> Iterator[str]:
        started = False
        for chunk in chunks:
            if not started:
                started = True
                yield self._start(chunk)
            if "error" in chunk:
                yield from self._close()
                yield event("error", {"type": "error", "error": {"type": "api_error", "message": _message(chunk)}})
                return
            yield from self._chunk(chunk)
        if not started:
            yield self._start({})
        yield from self._close()
        yield event("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": stop_reason(self._finish), "stop_sequence": None}, "usage": self._final_usage()})
        yield event("message_stop", {"type": "message_stop"})

    def _start(self, chunk: Mapping[str, Any]) -> str:
        model = chunk.get("model") if isinstance(chunk.get("model"), str) else self._model
        return event("message_start", {"type": "message_start", "message": {
            "id": message_id(chunk), "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 0, "output_tokens": 0}}})

    def _chunk(self, chunk: Mapping[str, Any]) -> Iterator[str]:
        if isinstance(chunk.get("usage"), dict):
            self._usage = chunk["usage"]
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return
        choice = choices[0]
        if choice.get("finish_reason"):
            self._finish = choice["finish_reason"]
        delta = _dict(choice.get("delta"))
        text = delta.get("content")
        if isinstance(text, str) and text:
            yield from self._open_block("text", {"type": "text", "text": ""})
            self._text.append(text)
            yield self._delta({"type": "text_delta", "text": text})
        for call in delta.get("tool_calls") or []:
            if isinstance(call, dict):
                yield from self._tool_delta(call)

    def _tool_delta(self, call: Mapping[str, Any]) -> Iterator[str]:
        function = _dict(call.get("function"))
        yield from self._open_block(f"tool:{call.get('index', 0)}", {
            "type": "tool_use", "id": str(call.get("id") or f"toolu_{uuid.uuid4().hex}"),
            "name": str(function.get("name") or ""), "input": {}})
        piece = function.get("arguments")
        if isinstance(piece, str) and piece:
            yield self._delta({"type": "input_json_delta", "partial_json": piece})

    def _open_block(self, kind: str, block: dict[str, Any]) -> Iterator[str]:
        if self._open == kind:
            return
        yield from self._close()
        self._index += 1
        self._open = kind
        yield event("content_block_start", {"type": "content_block_start", "index": self._index,
                                            "content_block": block})

    def _delta(self, delta: dict[str, Any]) -> str:
        return event("content_block_delta", {"type": "content_block_delta", "index": self._index, "delta": delta})

    def _close(self) -> Iterator[str]:
        if self._open is not None:
            self._open = None
            yield event("content_block_stop", {"type": "content_block_stop", "index": self._index})

    def _final_usage(self) -> dict[str, int]:
        output = _count(self._usage.get("completion_tokens"), estimate_tokens("".join(self._text)))
        usage = {"output_tokens": output}
        if "prompt_tokens" in self._usage:
            usage["input_tokens"] = _count(self._usage.get("prompt_tokens"))
        return usage


def _message(chunk: Mapping[str, Any]) -> str:
    error = chunk.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return str(error)
