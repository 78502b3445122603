"""Response body of `POST /messages`: an Anthropic message, plus the layer's `mnx` block."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class MessageUsage(BaseModel):
    input_tokens: int
    output_tokens: int


class MessageBody(BaseModel):
    """Anthropic's Messages answer (content blocks: text, tool_use) and `mnx`: chat_id, subject_id, event_id and
    the learning job, as on chat completions."""

    model_config = ConfigDict(extra="allow")

    id: str
    type: Literal["message"]
    role: Literal["assistant"]
    model: str
    content: list[dict[str, Any]]
    stop_reason: str | None
    stop_sequence: str | None
    usage: MessageUsage
    mnx: dict[str, Any]
