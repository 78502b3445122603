"""What callers of the chat layer send, validated once here (field names as the Mnexium SDK sends them). Every
limit is also stated in the JSON Schema, so the OpenAPI document tells a client what the server takes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StringConstraints, WithJsonSchema

from zengram.domain.chat.history import Role
from zengram.domain.chat.memories import MemoryKind, MemorySource, Visibility
from zengram.domain.chat.prompts import DEFAULT_PRIORITY, PromptScope
from zengram.domain.chat.providers import Provider
from zengram.domain.chat.records import FieldDef, FieldName, RecordVisibility, TypeName
from zengram.domain.chat.state import StateKey
from zengram.domain.chat.tenancy import ChatId, SubjectId
from zengram.domain.json_limits import json_depth, json_size, non_finite_number_at
from zengram.domain.request_fields import MAX_OFFSET, Content, Metadata, nesting_schema
from zengram.domain.text_rules import NotBlank

MAX_MESSAGES = 1000
MAX_MESSAGE_CHARS = 200_000
MAX_VALUE_BYTES = 64 * 1024
MAX_VALUE_DEPTH = 8
MAX_TAGS = 20
MAX_FIELDS = 100

Tag = Annotated[str, StringConstraints(min_length=1, max_length=64), NotBlank()]
Name = Annotated[str, StringConstraints(min_length=1, max_length=200), NotBlank()]
PromptText = Annotated[str, StringConstraints(max_length=50_000), NotBlank()]
PromptId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,100}$")]
ModelName = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$")]


def _json_value_within_limits(value: Any) -> Any:
    """A stored JSON value (agent state, record data): bounded depth and size, finite numbers."""
    if json_depth(value) > MAX_VALUE_DEPTH:
        raise ValueError(f"value: may nest at most {MAX_VALUE_DEPTH} levels")
    non_finite = non_finite_number_at(value)
    if non_finite is not None:
        raise ValueError(f"value.{non_finite}: must be a finite number (NaN and Infinity are not JSON)")
    if json_size(value) > MAX_VALUE_BYTES:
        raise ValueError(f"value: may be at most {MAX_VALUE_BYTES} bytes as JSON")
    return value


VALUE_SCHEMA: dict[str, Any] = {
    **nesting_schema(MAX_VALUE_DEPTH),
    "description": f"Any JSON value: at most {MAX_VALUE_DEPTH} levels of objects and arrays, at most "
                   f"{MAX_VALUE_BYTES} bytes as JSON, finite numbers only",
}
JsonValue = Annotated[Any, AfterValidator(_json_value_within_limits), WithJsonSchema(VALUE_SCHEMA)]
RECORD_DATA_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": nesting_schema(MAX_VALUE_DEPTH - 1),
    "description": f"The record's fields (validated against its schema): at most {MAX_VALUE_DEPTH} levels, at most "
                   f"{MAX_VALUE_BYTES} bytes as JSON, finite numbers only",
}
RecordData = Annotated[dict[str, Any], AfterValidator(_json_value_within_limits), WithJsonSchema(RECORD_DATA_SCHEMA)]


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
    clients keep working; `profile`, `summarize` and `regenerate_key` are accepted and noted as unsupported."""

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


# -- memories --------------------------------------------------------------------------------------------------

class MemoryCreate(BaseModel):
    """POST /memories. `source` may be any label: explicit/inferred/corrected are kept as the memory's source,
    another label (the SDK's README sends "settings") is kept in `metadata.source_label`, the source is explicit."""

    model_config = ConfigDict(extra="ignore")

    # null is the default for every optional field (the SDK sends `"visibility": null` when none is given)
    subject_id: SubjectId
    text: Content
    kind: MemoryKind | None = None  # fact
    visibility: Visibility | None = None  # private
    importance: Annotated[int, Field(ge=0, le=100)] | None = None  # 50
    confidence: Annotated[float, Field(ge=0, le=1)] | None = None  # 1.0
    is_temporal: StrictBool | None = None  # false
    tags: Annotated[list[Tag], Field(max_length=MAX_TAGS)] | None = None
    metadata: Metadata | None = None
    source: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = None
    no_supersede: StrictBool | None = None  # false

    def source_and_metadata(self) -> tuple[MemorySource, dict[str, Any]]:
        metadata = dict(self.metadata or {})
        if self.source is None:
            return MemorySource.EXPLICIT, metadata
        try:
            return MemorySource(self.source), metadata
        except ValueError:
            return MemorySource.EXPLICIT, {**metadata, "source_label": self.source}


class MemoryPatch(BaseModel):
    """PATCH /memories/{id}: any subset. New text on an inferred memory makes it `corrected`."""

    model_config = ConfigDict(extra="ignore")

    text: Content | None = None
    kind: MemoryKind | None = None
    visibility: Visibility | None = None
    importance: Annotated[int, Field(ge=0, le=100)] | None = None
    confidence: Annotated[float, Field(ge=0, le=1)] | None = None
    is_temporal: StrictBool | None = None
    tags: Annotated[list[Tag], Field(max_length=MAX_TAGS)] | None = None
    metadata: Metadata | None = None


# -- agent state -----------------------------------------------------------------------------------------------

class StatePut(BaseModel):
    model_config = ConfigDict(extra="ignore")

    value: JsonValue
    ttl_seconds: Annotated[int, Field(ge=1, le=10 * 365 * 86_400)] | None = None


# -- records ---------------------------------------------------------------------------------------------------

class SchemaDefine(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type_name: TypeName
    # Field names match the pattern: no other key is allowed (stated, so the OpenAPI document says it too).
    fields: Annotated[dict[FieldName, FieldDef], Field(min_length=1, max_length=MAX_FIELDS,
                                                       json_schema_extra={"additionalProperties": False})]
    display_name: Annotated[str, StringConstraints(max_length=200)] | None = None
    description: Annotated[str, StringConstraints(max_length=1000)] | None = None


class RecordInsert(BaseModel):
    model_config = ConfigDict(extra="ignore")

    data: RecordData
    owner_id: SubjectId | None = None
    visibility: RecordVisibility = RecordVisibility.PUBLIC
    collaborators: Annotated[list[SubjectId], Field(max_length=50)] = Field(default_factory=list)


class RecordUpdate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    data: RecordData


class RecordQueryIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    where: Annotated[dict[str, Any], AfterValidator(_json_value_within_limits),
                     WithJsonSchema(RECORD_DATA_SCHEMA)] = Field(default_factory=dict)
    order_by: Annotated[str, StringConstraints(pattern=r"^-?[A-Za-z_][A-Za-z0-9_]{0,63}$")] | None = None
    limit: Annotated[int, Field(ge=1, le=500)] = 50
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0


class RecordSearchIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    query: Annotated[str, StringConstraints(max_length=1000), NotBlank()]
    limit: Annotated[int, Field(ge=1, le=100)] = 10


# -- prompts ---------------------------------------------------------------------------------------------------

class PromptCreate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: Name
    prompt_text: PromptText
    scope: PromptScope = PromptScope.PROJECT
    scope_id: SubjectId | None = None  # the subject or chat id of a subject/chat prompt
    is_default: StrictBool = False
    priority: Annotated[int, Field(ge=0, le=10_000)] = DEFAULT_PRIORITY


class PromptPatch(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: Name | None = None
    prompt_text: PromptText | None = None
    is_default: StrictBool | None = None
    is_active: StrictBool | None = None
    priority: Annotated[int, Field(ge=0, le=10_000)] | None = None

