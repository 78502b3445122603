"""What callers send about a subject's data (memories, record schemas and records), validated once here (field names
as the Mnexium SDK sends them), every limit stated in the JSON Schema too. Apart from the chat turn's requests
(`requests`), so that each chat function's init builds only its own routes' models (#18 §5)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StringConstraints, WithJsonSchema

from zengram.chat.domain.memories import MemoryKind, MemorySource, Visibility
from zengram.chat.domain.records import FieldDef, FieldName, RecordVisibility, TypeName
from zengram.chat.domain.request_values import RECORD_DATA_SCHEMA, RecordData, json_value_within_limits
from zengram.chat.domain.tenancy import SubjectId
from zengram.kernel.request_fields import MAX_OFFSET, Content, Metadata, NotBoolean
from zengram.kernel.text_rules import NotBlank

MAX_TAGS = 20
MAX_FIELDS = 100

Tag = Annotated[str, StringConstraints(min_length=1, max_length=64), NotBlank()]


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
    importance: Annotated[int, Field(ge=0, le=100), NotBoolean] | None = None  # 50
    confidence: Annotated[float, Field(ge=0, le=1), NotBoolean] | None = None  # 1.0
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
    importance: Annotated[int, Field(ge=0, le=100), NotBoolean] | None = None
    confidence: Annotated[float, Field(ge=0, le=1), NotBoolean] | None = None
    is_temporal: StrictBool | None = None
    tags: Annotated[list[Tag], Field(max_length=MAX_TAGS)] | None = None
    metadata: Metadata | None = None


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

    where: Annotated[dict[str, Any], AfterValidator(json_value_within_limits),
                     WithJsonSchema(RECORD_DATA_SCHEMA)] = Field(default_factory=dict)
    order_by: Annotated[str, StringConstraints(pattern=r"^-?[A-Za-z_][A-Za-z0-9_]{0,63}$")] | None = None
    limit: Annotated[int, Field(ge=1, le=500), NotBoolean] = 50
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET), NotBoolean] = 0


class RecordSearchIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    query: Annotated[str, StringConstraints(max_length=1000), NotBlank()]
    limit: Annotated[int, Field(ge=1, le=100), NotBoolean] = 10
