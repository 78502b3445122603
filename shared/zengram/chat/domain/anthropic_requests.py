"""`POST /api/v1/messages`: Anthropic's Messages request, validated here and translated into the chat-completions
request the layer already assembles, sends and learns from (docs/chat.md, "Anthropic Messages").

The translation is the one Anthropic's own OpenAI compatibility documents, in the other direction: `system` (a
string or text blocks) becomes the leading system message, text blocks become text parts, images image parts,
an assistant's `tool_use` blocks its `tool_calls`, a user's `tool_result` blocks `tool` messages; `max_tokens`,
`temperature`, `top_p`, `stop_sequences`, `metadata.user_id`, `tools` and `tool_choice` keep their meaning. The
blocks each role may send are typed, so the OpenAPI document states them and anything else (documents, thinking,
server tools) is refused by validation, never dropped without a word; request fields Anthropic has and this layer
does not use (`top_k`, `thinking`, `service_tier`…) are ignored. The `mnx` block is the same as on chat completions.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StringConstraints, ValidationError

from zengram.chat.domain.requests import MAX_MESSAGE_CHARS, MAX_MESSAGES, ChatCompletionRequest, MnxOptions, ModelName
from zengram.kernel.errors import InvalidInput
from zengram.kernel.request_fields import NotBoolean
from zengram.kernel.validation import describe_validation_errors

MAX_BLOCKS = 500
MAX_TOOLS = 128
MAX_IMAGE_CHARS = 10_000_000  # base64; the request body limit is the tighter bound
Text = Annotated[str, StringConstraints(max_length=MAX_MESSAGE_CHARS)]
Short = Annotated[str, StringConstraints(min_length=1, max_length=200)]
ToolName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$")]  # what a function name may be


class _Block(BaseModel):
    model_config = ConfigDict(extra="ignore")  # cache_control, citations…: nothing the translation carries


class TextBlock(_Block):
    type: Literal["text"]
    text: Text


class Base64Source(_Block):
    type: Literal["base64"]
    media_type: Annotated[str, StringConstraints(pattern=r"^image/[a-z0-9.+-]{1,50}$")]
    data: Annotated[str, StringConstraints(max_length=MAX_IMAGE_CHARS)]


class UrlSource(_Block):
    type: Literal["url"]
    url: Annotated[str, StringConstraints(pattern=r"^https?://", max_length=2000)]


class ImageBlock(_Block):
    type: Literal["image"]
    source: Annotated[Base64Source | UrlSource, Field(discriminator="type")]

    def url(self) -> str:
        source = self.source
        return f"data:{source.media_type};base64,{source.data}" if isinstance(source, Base64Source) else source.url


class ToolUseBlock(_Block):
    type: Literal["tool_use"]
    id: Short
    name: ToolName
    input: dict[str, Any] = Field(default_factory=dict)


class ToolResultBlock(_Block):
    type: Literal["tool_result"]
    tool_use_id: Short
    content: Annotated[list[TextBlock], Field(max_length=MAX_BLOCKS)] | Text | None = None
    is_error: StrictBool | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "\n".join(block.text for block in self.content)
        return self.content or ""


UserBlock = Annotated[TextBlock | ImageBlock | ToolResultBlock, Field(discriminator="type")]
AssistantBlock = Annotated[TextBlock | ToolUseBlock, Field(discriminator="type")]


class UserMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["user"]
    content: Annotated[list[UserBlock], Field(min_length=1, max_length=MAX_BLOCKS)] | Text  # blocks first: their
    # errors are the ones worth reading


class AssistantMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["assistant"]
    content: Annotated[list[AssistantBlock], Field(min_length=1, max_length=MAX_BLOCKS)] | Text


class AnthropicMetadata(BaseModel):
    model_config = ConfigDict(extra="ignore")

    user_id: Annotated[str, StringConstraints(max_length=256)] | None = None


class Tool(BaseModel):
    """A custom tool (server tools, which name a `type`, are not offered)."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["custom"] | None = None
    name: ToolName
    description: Annotated[str, StringConstraints(max_length=10_000)] | None = None
    input_schema: dict[str, Any]

    def function(self) -> dict[str, Any]:
        described = {"description": self.description} if self.description is not None else {}
        return {"type": "function", "function": {"name": self.name, **described, "parameters": self.input_schema}}


class _Choice(BaseModel):
    model_config = ConfigDict(extra="ignore")

    disable_parallel_tool_use: StrictBool | None = None


class AutoChoice(_Choice):
    type: Literal["auto"]


class AnyChoice(_Choice):
    type: Literal["any"]


class NoChoice(_Choice):
    type: Literal["none"]


class ToolChoice(_Choice):
    type: Literal["tool"]
    name: ToolName


Choice = Annotated[AutoChoice | AnyChoice | NoChoice | ToolChoice, Field(discriminator="type")]
OPENAI_CHOICE = {"auto": "auto", "any": "required", "none": "none"}


class MessagesRequest(BaseModel):
    """Anthropic's Messages body plus `mnx` (the SDK's `extra_body={"mnx": {...}}`)."""

    model_config = ConfigDict(extra="ignore")

    model: ModelName
    max_tokens: Annotated[int, Field(ge=1, le=1_000_000), NotBoolean]
    messages: Annotated[list[Annotated[UserMessage | AssistantMessage, Field(discriminator="role")]],
                        Field(min_length=1, max_length=MAX_MESSAGES)]
    system: Annotated[list[TextBlock], Field(max_length=MAX_BLOCKS)] | Text | None = None
    stream: StrictBool = False
    temperature: Annotated[float, Field(ge=0, le=2), NotBoolean] | None = None
    top_p: Annotated[float, Field(ge=0, le=1), NotBoolean] | None = None
    stop_sequences: Annotated[list[Annotated[str, StringConstraints(max_length=500)]], Field(max_length=16)] | None \
        = None
    metadata: AnthropicMetadata | None = None
    tools: Annotated[list[Tool], Field(max_length=MAX_TOOLS)] | None = None
    tool_choice: Choice | None = None
    mnx: MnxOptions | None = None

    def as_chat_completion(self) -> ChatCompletionRequest:
        """The same request on the chat-completions wire (InvalidInput when what it says, joined, is too long)."""
        messages: list[dict[str, Any]] = []
        system = self.system if isinstance(self.system, str) else "\n\n".join(b.text for b in self.system or [])
        if system:
            messages.append({"role": "system", "content": system})
        for message in self.messages:
            messages.extend(_user(message) if isinstance(message, UserMessage) else [_assistant(message)])
        try:
            return ChatCompletionRequest.model_validate({
                "model": self.model, "messages": messages, "stream": self.stream,
                **({"mnx": self.mnx} if self.mnx is not None else {}), **self._parameters()})
        except ValidationError as error:  # e.g. text blocks that, joined, exceed a message's length
            raise InvalidInput("messages", describe_validation_errors(error.errors())) from None

    def _parameters(self) -> dict[str, Any]:
        parameters: dict[str, Any] = {"max_tokens": self.max_tokens}
        for name, value in (("temperature", self.temperature), ("top_p", self.top_p),
                            ("stop", self.stop_sequences)):
            if value is not None:
                parameters[name] = value
        if self.metadata is not None and self.metadata.user_id:
            parameters["user"] = self.metadata.user_id
        if self.tools:
            parameters["tools"] = [tool.function() for tool in self.tools]
        choice = self.tool_choice
        if choice is not None:
            parameters["tool_choice"] = {"type": "function", "function": {"name": choice.name}} \
                if isinstance(choice, ToolChoice) else OPENAI_CHOICE[choice.type]
            if choice.disable_parallel_tool_use:
                parameters["parallel_tool_calls"] = False
        return parameters


def _user(message: UserMessage) -> list[dict[str, Any]]:
    """A user message as chat-completions messages: its tool results first, as `tool` messages."""
    if isinstance(message.content, str):
        return [{"role": "user", "content": message.content}]
    results = [{"role": "tool", "tool_call_id": block.tool_use_id, "content": block.text()}
               for block in message.content if isinstance(block, ToolResultBlock)]
    parts = [{"type": "text", "text": block.text} if isinstance(block, TextBlock)
             else {"type": "image_url", "image_url": {"url": block.url()}}
             for block in message.content if isinstance(block, TextBlock | ImageBlock)]
    return [*results, *([{"role": "user", "content": _content(parts)}] if parts else [])]


def _assistant(message: AssistantMessage) -> dict[str, Any]:
    if isinstance(message.content, str):
        return {"role": "assistant", "content": message.content}
    parts = [{"type": "text", "text": block.text} for block in message.content if isinstance(block, TextBlock)]
    calls = [{"id": block.id, "type": "function",
              "function": {"name": block.name, "arguments": json.dumps(block.input)}}
             for block in message.content if isinstance(block, ToolUseBlock)]
    return {"role": "assistant", "content": _content(parts), **({"tool_calls": calls} if calls else {})}


def _content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]] | None:
    """Text parts only: one string (several joined by newlines); with images: the parts."""
    if not parts:
        return None
    if all(part["type"] == "text" for part in parts):
        return "\n".join(part["text"] for part in parts)
    return parts
