"""What callers of the chat turn send (completions, agent state, prompts), validated once here (field names as the
Mnexium SDK sends them). Every limit is also stated in the JSON Schema, so the OpenAPI document tells a client what
the server takes. A subject's memories and records have theirs in `data_requests`: the chat function's init does
not build them (#18 §5)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StringConstraints

from zengram.chat.domain.history import Role
from zengram.chat.domain.prompt_scopes import DEFAULT_PRIORITY, PromptScope
from zengram.chat.domain.providers import Provider
from zengram.chat.domain.record_names import TypeName
from zengram.chat.domain.request_values import JsonValue
from zengram.chat.domain.state import StateKey
from zengram.chat.domain.tenancy import ChatId, SubjectId
from zengram.kernel.request_fields import Metadata, NotBoolean
from zengram.kernel.text_rules import NotBlank

MAX_MESSAGES = 1000
MAX_MESSAGE_CHARS = 200_000

Name = Annotated[str, StringConstraints(min_length=1, max_length=200), NotBlank()]
PromptText = Annotated[str, StringConstraints(max_length=50_000), NotBlank()]
PromptId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,100}$")]
ModelName = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$")]


# -- chat completions ------------------------------------------------------------------------------------------

class ChatMessageIn(BaseModel):
    """One message of an OpenAI-style request; fields beyond these (tool_calls…) go to the model as sent."""

    model_config = ConfigDict(extra="allow")

    role: Role
    content: Annotated[str, StringConstraints(max_length=MAX_MESSAGE_CHARS)] | list[dict[str, Any]] | None = None
    name: Annotated[str, StringConstraints(max_length=64)] | None = None
    tool_call_id: Annotated[str, StringConstraints(max_length=200)] | None = None

    def text(self) -> str:
        """The message's text (text parts joined), for history, search and token counts."""
        if isinstance(self.content, str):
            return self.content
        if isinstance(self.content, list):
            return "\n".join(str(part.get("text", "")) for part in self.content
                             if isinstance(part, dict) and part.get("type") == "text")
        return ""


class MnxState(BaseModel):
    model_config = ConfigDict(extra="ignore")

    load: StrictBool = False
    key: StateKey | None = None  # one key; None loads every live key of the subject


class MnxRecords(BaseModel):
    model_config = ConfigDict(extra="ignore")

    recall: StrictBool = False
    learn: Literal[False, "auto", "force"] = False
    sync: StrictBool = False  # learn before answering, and report what was written in `mnx.records`
    tables: Annotated[list[TypeName], Field(max_length=50)] | None = None  # schemas to use (None: all)


class MnxOptions(BaseModel):
    """The `mnx` block (mnexium-concepts.md; defaults as Mnexium documents them). Unknown keys are ignored, so newer
    clients keep working; `summarize` and `regenerate_key` are accepted and noted as unsupported."""

    model_config = ConfigDict(extra="ignore")

    subject_id: SubjectId | None = None  # generated (subj_…) when absent
    chat_id: ChatId | None = None  # generated when absent
    log: StrictBool = True
    learn: StrictBool | Literal["force"] = True
    recall: StrictBool = False
    history: StrictBool = True
    system_prompt: StrictBool | PromptId = True
    state: MnxState | StrictBool | None = None  # true: load every key
    records: MnxRecords | None = None
    metadata: Metadata | None = None
    memory_policy: StrictBool | Annotated[str, StringConstraints(max_length=200)] | None = None
    provider: Provider | None = None  # else chosen by the key headers and the model name
    profile: StrictBool | None = None
    summarize: StrictBool | Annotated[str, StringConstraints(max_length=50)] | None = None
    regenerate_key: StrictBool | None = None

    @property
    def state_options(self) -> MnxState:
        if isinstance(self.state, MnxState):
            return self.state
        return MnxState(load=bool(self.state))

    @property
    def records_options(self) -> MnxRecords:
        return self.records or MnxRecords()


class ChatCompletionRequest(BaseModel):
    """OpenAI's chat-completions body plus `mnx`; every other field (temperature, max_tokens, tools…) is passed to
    the model as sent."""

    model_config = ConfigDict(extra="allow")

    model: ModelName
    messages: Annotated[list[ChatMessageIn], Field(min_length=1, max_length=MAX_MESSAGES)]
    stream: StrictBool = False
    mnx: MnxOptions | None = None

    @property
    def options(self) -> MnxOptions:
        return self.mnx or MnxOptions()

    def passthrough(self) -> dict[str, Any]:
        """The fields the layer does not interpret, for the provider."""
        return dict(self.model_extra or {})


# -- agent state -----------------------------------------------------------------------------------------------

class StatePut(BaseModel):
    model_config = ConfigDict(extra="ignore")

    value: JsonValue
    ttl_seconds: Annotated[int, Field(ge=1, le=10 * 365 * 86_400), NotBoolean] | None = None


# -- prompts ---------------------------------------------------------------------------------------------------

class PromptCreate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: Name
    prompt_text: PromptText
    scope: PromptScope = PromptScope.PROJECT
    scope_id: SubjectId | None = None  # the subject or chat id of a subject/chat prompt
    is_default: StrictBool = False
    priority: Annotated[int, Field(ge=0, le=10_000), NotBoolean] = DEFAULT_PRIORITY


class PromptPatch(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: Name | None = None
    prompt_text: PromptText | None = None
    is_default: StrictBool | None = None
    is_active: StrictBool | None = None
    priority: Annotated[int, Field(ge=0, le=10_000), NotBoolean] | None = None
