"""Chat history: every message of a conversation, per (subject, chat), in order; and which of them a new turn
replays within its token budget."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from zengram.chat.domain.tokens import message_tokens
from zengram.kernel.timestamps import format_timestamp


class Role(StrEnum):
    SYSTEM = "system"
    DEVELOPER = "developer"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class StoredMessage(BaseModel):
    """One message as the history holds it; `index` orders a chat's messages (increasing, not always dense)."""

    model_config = ConfigDict(frozen=True)

    project_id: str
    subject_id: str
    chat_id: str
    index: int
    role: Role
    content: str  # scrubbed of credentials
    name: str | None = None
    tool_call_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime

    @field_serializer("created_at", when_used="json")
    def _timestamp_text(self, moment: datetime) -> str:
        return format_timestamp(moment)

    @property
    def tokens(self) -> int:
        return message_tokens(self.content)

    def as_prompt_message(self) -> dict[str, Any]:
        """The message as the model receives it when the history is replayed."""
        message: dict[str, Any] = {"role": self.role.value, "content": self.content}
        if self.name:
            message["name"] = self.name
        if self.tool_call_id:
            message["tool_call_id"] = self.tool_call_id
        return message


class NewMessage(BaseModel):
    """A message to append (the store gives it its index)."""

    role: Role
    content: str
    name: str | None = None
    tool_call_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class ChatSummary(BaseModel):
    """One chat of a subject: when it started, when it last spoke, how many messages it holds."""

    model_config = ConfigDict(frozen=True)

    project_id: str
    subject_id: str
    chat_id: str
    created_at: datetime
    last_message_at: datetime
    message_count: int


def within_budget(messages: Sequence[StoredMessage], budget: int) -> list[StoredMessage]:
    """The most recent whole messages whose estimated tokens fit `budget`, oldest first (a message that would
    overflow it ends the replay: older ones are not skipped over)."""
    kept: list[StoredMessage] = []
    spent = 0
    for message in reversed(messages):
        if spent + message.tokens > budget:
            break
        kept.append(message)
        spent += message.tokens
    return kept[::-1]
