"""Response bodies of the history, trace and learning job routes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from zengram.chat.domain.history import ChatSummary, StoredMessage
from zengram.kernel.timestamps import format_timestamp

if TYPE_CHECKING:
    from zengram.chat.domain.learning import LearningJob  # a job is only read here: its module loads with the service


class ChatOut(BaseModel):
    chat_id: str
    subject_id: str
    created_at: str
    last_message_at: str
    last_time: str  # Mnexium's name for last_message_at
    message_count: int

    @classmethod
    def of(cls, chat: ChatSummary) -> ChatOut:
        last = format_timestamp(chat.last_message_at)
        return cls(chat_id=chat.chat_id, subject_id=chat.subject_id, created_at=format_timestamp(chat.created_at),
                   last_message_at=last, last_time=last, message_count=chat.message_count)


class ChatListBody(BaseModel):
    chats: list[ChatOut]


class MessageOut(BaseModel):
    role: str
    message: str  # Mnexium's name for the content
    content: str
    message_index: int
    event_time: str
    name: str | None = None
    tool_call_id: str | None = None
    metadata: dict[str, Any]

    @classmethod
    def of(cls, message: StoredMessage) -> MessageOut:
        return cls(role=message.role.value, message=message.content, content=message.content,
                   message_index=message.index, event_time=format_timestamp(message.created_at), name=message.name,
                   tool_call_id=message.tool_call_id, metadata=message.metadata)


class ChatReadBody(BaseModel):
    chat_id: str
    data: list[MessageOut]  # as the SDK reads it
    messages: list[MessageOut]  # as Mnexium's documentation shows it
    count: int


class TraceBody(BaseModel):
    chat_id: str
    events: list[dict[str, Any]]
    count: int


class JobOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    status: str
    attempts: int
    last_error: str | None

    @classmethod
    def of(cls, job: LearningJob) -> JobOut:
        return cls(**job.model_dump(mode="json"))


class JobsBody(BaseModel):
    jobs: list[JobOut]
    count: int

