"""Response bodies of the chat routes, typed so the OpenAPI document states their shape (field names as the
Mnexium SDK reads them)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from zengram.api.schemas import documented_error
from zengram.domain.chat.history import ChatSummary, StoredMessage
from zengram.domain.chat.learning import LearningJob
from zengram.domain.chat.memories import SubjectMemory
from zengram.domain.chat.prompts import SystemPrompt
from zengram.domain.chat.records import DataRecord, RecordSchema
from zengram.domain.chat.state import AgentState
from zengram.domain.timestamps import format_timestamp

CHAT_ERRORS: dict[int | str, dict[str, Any]] = {
    400: documented_error("Invalid input; the message names the field"),
    401: documented_error("Missing or invalid API key (x-mnexium-key, x-api-key or Bearer)"),
    403: documented_error("The API key's role or clients do not allow this (docs/keys.md)"),
    404: documented_error("Not found in this project"),
    409: documented_error("Conflicting state"),
    429: documented_error("Rate limited per API key; the Retry-After header says when to retry"),
    503: documented_error("The search index (or a provider) is unavailable"),
}
PROVIDER_ERRORS: dict[int | str, dict[str, Any]] = {
    502: documented_error("The provider failed or answered with something unusable"),
    503: documented_error("No provider configured, or the provider is unreachable"),
}


class MemoryOut(BaseModel):
    """A subject memory (Mnexium's fields)."""

    id: str
    project_id: str
    subject_id: str
    text: str
    kind: str
    importance: int
    visibility: str
    confidence: float
    source: str
    is_temporal: bool
    tags: list[str]
    metadata: dict[str, Any]
    status: str
    superseded_by: str | None
    supersedes: list[str]
    seen_count: int
    last_seen_at: str | None
    chat_id: str | None
    created_at: str
    updated_at: str
    is_deleted: bool

    @classmethod
    def of(cls, memory: SubjectMemory) -> MemoryOut:
        shown = memory.model_dump(mode="json", exclude={"text_hash", "revision", "deleted_at"})
        return cls(**shown, is_deleted=memory.is_deleted)


class MemoryHitOut(MemoryOut):
    score: float
    relevance: float


class MemoryListBody(BaseModel):
    data: list[MemoryOut]
    count: int


class MemorySearchBody(BaseModel):
    data: list[MemoryHitOut]
    query: str
    count: int


class MemoryCreatedBody(BaseModel):
    """201 when created (with what it superseded), 200 when skipped as a duplicate."""

    id: str | None
    subject_id: str
    text: str
    kind: str
    created: bool
    skipped: bool = False
    reason: str | None = None
    duplicate_of: str | None = None
    similarity: float | None = None
    superseded_count: int = 0
    superseded_ids: list[str] = []
    versioning: str
    memory: MemoryOut | None = None


class MemoryUpdatedBody(BaseModel):
    id: str
    updated: bool
    memory: MemoryOut


class DeletedBody(BaseModel):
    ok: bool
    deleted: bool


class RestoredBody(BaseModel):
    ok: bool
    restored: bool
    id: str
    subject_id: str
    text: str
    message: str | None = None


class RecallsBody(BaseModel):
    data: list[dict[str, Any]]
    count: int
    chat_id: str | None = None
    memory_id: str | None = None


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


class StateOut(BaseModel):
    key: str
    value: Any
    subject_id: str
    ttl: str | None  # Mnexium's name for the expiry
    expires_at: str | None
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, state: AgentState) -> StateOut:
        shown = state.model_dump(mode="json")
        return cls(key=state.key, value=state.value, subject_id=state.subject_id, ttl=shown["expires_at"],
                   expires_at=shown["expires_at"], created_at=shown["created_at"], updated_at=shown["updated_at"])


class SchemaOut(BaseModel):
    project_id: str
    type_name: str
    fields: dict[str, dict[str, Any]]
    display_name: str | None
    description: str | None
    json_schema: dict[str, Any]
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, schema: RecordSchema) -> SchemaOut:
        shown = schema.model_dump(mode="json")
        shown["fields"] = {name: definition.model_dump(mode="json", exclude_none=True)
                           for name, definition in schema.fields.items()}
        return cls(**shown, json_schema=schema.json_schema)


class SchemasBody(BaseModel):
    schemas: list[SchemaOut]


class RecordOut(BaseModel):
    record_id: str
    project_id: str
    type_name: str
    owner_id: str | None
    visibility: str
    collaborators: list[str]
    data: dict[str, Any]
    summary_text: str
    is_deleted: bool
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, record: DataRecord) -> RecordOut:
        return cls(**record.view())


class RecordHitOut(RecordOut):
    similarity: float


class RecordsBody(BaseModel):
    records: list[RecordOut]
    count: int


class RecordHitsBody(BaseModel):
    records: list[RecordHitOut]
    count: int


class PromptOut(BaseModel):
    id: str
    project_id: str
    name: str
    prompt_text: str
    scope: str
    scope_id: str | None
    is_default: bool
    is_active: bool
    priority: int
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, prompt: SystemPrompt) -> PromptOut:
        return cls(**prompt.model_dump(mode="json"))


class PromptBody(BaseModel):
    ok: bool
    prompt: PromptOut


class PromptsBody(BaseModel):
    prompts: list[PromptOut]


class ResolvedBody(BaseModel):
    subject_id: str | None
    chat_id: str | None
    prompts: list[PromptOut]
    prompt_text: str  # the prompts combined, as a completion receives them
    count: int


class CompletionBody(BaseModel):
    """The provider's chat-completions answer as it sent it, plus the layer's `mnx` block."""

    model_config = ConfigDict(extra="allow")

    mnx: dict[str, Any]
