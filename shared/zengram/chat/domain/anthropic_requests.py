"""`POST /api/v1/messages`: Anthropic's Messages request, validated here and translated into the chat-completions
request the layer already assembles, sends and learns from (docs/chat.md, "Anthropic Messages").

The translation is the one Anthropic's own OpenAI compatibility documents, in the other direction: `system` (a
string or text blocks) becomes the leading system message, text blocks become text parts, images image parts,
an assistant's `tool_use` blocks its `tool_calls`, a user's `tool_result` blocks `tool` messages; `max_tokens`,
`temperature`, `top_p`, `stop_sequences`, `metadata.user_id`, `tools` and `tool_choice` keep their meaning. Block
types the chat-completions wire cannot say (documents, thinking, server tools) are refused by name, never dropped
without a word; request fields Anthropic has and this layer does not use (`top_k`, `thinking`, `service_tier`…)
are ignored. The `mnx` block is the same as on chat completions.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StringConstraints, ValidationError

from zengram.chat.domain.requests import MAX_MESSAGE_CHARS, MAX_MESSAGES, ChatCompletionRequest, MnxOptions, ModelName
from zengram.kernel.errors import InvalidInput

MAX_BLOCKS = 500
MAX_TOOLS = 128
Block = dict[str, Any]
Text = Annotated[str, StringConstraints(max_length=MAX_MESSAGE_CHARS)]


class AnthropicMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["user", "assistant"]
    content: Text | Annotated[list[Block], Field(max_length=MAX_BLOCKS)]


class AnthropicMetadata(BaseModel):
    model_config = ConfigDict(extra="ignore")

    user_id: Annotated[str, StringConstraints(max_length=256)] | None = None


class MessagesRequest(BaseModel):
    """Anthropic's Messages body plus `mnx` (the SDK's `extra_body={"mnx": {...}}`)."""

    model_config = ConfigDict(extra="ignore")

    model: ModelName
    max_tokens: Annotated[int, Field(ge=1, le=1_000_000)]
    messages: Annotated[list[AnthropicMessage], Field(min_length=1, max_length=MAX_MESSAGES)]
    system: Text | Annotated[list[Block], Field(max_length=MAX_BLOCKS)] | None = None
    stream: StrictBool = False
    temperature: Annotated[float, Field(ge=0, le=2)] | None = None
    top_p: Annotated[float, Field(ge=0, le=1)] | None = None
    stop_sequences: Annotated[list[Annotated[str, StringConstraints(max_length=500)]], Field(max_length=16)] | None \
        = None
    metadata: AnthropicMetadata | None = None
    tools: Annotated[list[Block], Field(max_length=MAX_TOOLS)] | None = None
    tool_choice: Block | None = None
    mnx: MnxOptions | None = None

    def as_chat_completion(self) -> ChatCompletionRequest:
        """The same request on the chat-completions wire (InvalidInput names a block it cannot translate)."""
        messages: list[dict[str, Any]] = []
        if self.system:
            messages.append({"role": "system", "content": _system_text(self.system)})
        for index, message in enumerate(self.messages):
            messages.extend(_translated(message, f"messages[{index}]"))
        try:
            return ChatCompletionRequest.model_validate({
                "model": self.model, "messages": messages, "stream": self.stream,
                **({"mnx": self.mnx} if self.mnx is not None else {}), **self._parameters()})
        except ValidationError as error:  # e.g. text blocks that, joined, exceed a message's length
            first = error.errors()[0]
            raise InvalidInput(".".join(str(part) for part in first["loc"]), first["msg"]) from None

    def _parameters(self) -> dict[str, Any]:
        parameters: dict[str, Any] = {"max_tokens": self.max_tokens}
        for name, value in (("temperature", self.temperature), ("top_p", self.top_p),
                            ("stop", self.stop_sequences)):
            if value is not None:
                parameters[name] = value
        if self.metadata is not None and self.metadata.user_id:
            parameters["user"] = self.metadata.user_id
        if self.tools:
            parameters["tools"] = [_tool(tool, f"tools[{i}]") for i, tool in enumerate(self.tools)]
        if self.tool_choice is not None:
            parameters.update(_tool_choice(self.tool_choice))
        return parameters


def _system_text(system: str | list[Block]) -> str:
    if isinstance(system, str):
        return system
    for index, block in enumerate(system):
        if block.get("type") != "text" or not isinstance(block.get("text"), str):
            raise InvalidInput(f"system[{index}]", "only text blocks are supported")
    return "\n\n".join(block["text"] for block in system)


def _translated(message: AnthropicMessage, where: str) -> list[dict[str, Any]]:
    """One Anthropic message as chat-completions messages: a user's tool results first, as `tool` messages."""
    if isinstance(message.content, str):
        return [{"role": message.role, "content": message.content}]
    results: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for index, block in enumerate(message.content):
        at = f"{where}.content[{index}]"
        kind = block.get("type")
        if kind == "text":
            parts.append({"type": "text", "text": _string(block, "text", at)})
        elif kind == "image" and message.role == "user":
            parts.append({"type": "image_url", "image_url": {"url": _image_url(block, at)}})
        elif kind == "tool_result" and message.role == "user":
            results.append({"role": "tool", "tool_call_id": _string(block, "tool_use_id", at),
                            "content": _result_text(block.get("content"), at)})
        elif kind == "tool_use" and message.role == "assistant":
            calls.append({"id": _string(block, "id", at), "type": "function", "function": {
                "name": _string(block, "name", at), "arguments": json.dumps(block.get("input") or {})}})
        else:
            raise InvalidInput(f"{at}.type", f"'{kind}' blocks are not supported in {message.role} messages here")
    said = _content(parts)
    if message.role == "assistant":
        return [{"role": "assistant", "content": said, **({"tool_calls": calls} if calls else {})}]
    return [*results, *([{"role": "user", "content": said}] if parts else [])]


def _content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]] | None:
    """Text parts only: one string (as the caller wrote it); with images: the parts."""
    if not parts:
        return None
    if all(part["type"] == "text" for part in parts):
        return "".join(part["text"] for part in parts) if len(parts) == 1 else "\n".join(p["text"] for p in parts)
    return parts


def _string(block: Block, name: str, at: str) -> str:
    value = block.get(name)
    if not isinstance(value, str):
        raise InvalidInput(f"{at}.{name}", "required (a string)")
    return value


def _image_url(block: Block, at: str) -> str:
    source = block.get("source")
    if isinstance(source, dict) and source.get("type") == "base64":
        return f"data:{_string(source, 'media_type', at + '.source')};base64,{_string(source, 'data', at + '.source')}"
    if isinstance(source, dict) and source.get("type") == "url":
        return _string(source, "url", at + ".source")
    raise InvalidInput(f"{at}.source", "a base64 or url image source is required")


def _result_text(content: Any, at: str) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "\n".join(_string(b, "text", f"{at}.content") for b in content)
    raise InvalidInput(f"{at}.content", "a tool result's content must be text")


def _tool(tool: Block, at: str) -> dict[str, Any]:
    if tool.get("type") not in (None, "custom"):
        raise InvalidInput(f"{at}.type", f"'{tool.get('type')}': server tools are not supported here")
    schema = tool.get("input_schema")
    if not isinstance(schema, dict):
        raise InvalidInput(f"{at}.input_schema", "required (a JSON Schema object)")
    described = {"description": tool["description"]} if isinstance(tool.get("description"), str) else {}
    return {"type": "function", "function": {"name": _string(tool, "name", at), **described, "parameters": schema}}


def _tool_choice(choice: Block) -> dict[str, Any]:
    kind = choice.get("type")
    picked: dict[str, Any] = {"auto": {"tool_choice": "auto"}, "any": {"tool_choice": "required"},
                              "none": {"tool_choice": "none"}}.get(str(kind), {})
    if kind == "tool":
        picked = {"tool_choice": {"type": "function", "function": {"name": _string(choice, "name", "tool_choice")}}}
    if not picked:
        raise InvalidInput("tool_choice.type", "one of auto, any, tool, none")
    if choice.get("disable_parallel_tool_use") is True:
        picked["parallel_tool_calls"] = False
    return picked
