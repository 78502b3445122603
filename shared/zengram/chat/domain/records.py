"""Records: schema-backed structured entities of a project (accounts, deals, tickets…), validated with JSON Schema,
queried by exact field values and searched through a text projection.

A schema is defined Mnexium's way (`{"name": {"type": "string", "required": true}, …}`); `json_schema_of` turns
it into the JSON Schema every insert and update is validated against.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_serializer

from zengram.chat.domain.record_names import FIELD_NAME_PATTERN as FIELD_NAME_PATTERN
from zengram.chat.domain.record_names import TYPE_NAME_PATTERN as TYPE_NAME_PATTERN
from zengram.chat.domain.record_names import FieldName as FieldName
from zengram.chat.domain.record_names import TypeName as TypeName
from zengram.chat.domain.record_patterns import check_patterns, record_validator
from zengram.chat.domain.scopes import record_scope
from zengram.kernel.errors import Conflict, InvalidInput
from zengram.kernel.timestamps import format_timestamp

if TYPE_CHECKING:
    from zengram.kernel.search import IndexAttributes

RESERVED_TYPE_NAMES = frozenset({"schemas"})  # a path of its own under /records
RECORD_CATEGORY = "record"
MAX_SUMMARY_CHARS = 4000

# Field types as Mnexium's clients write them, and the JSON Schema each stands for.
FIELD_TYPES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"}, "text": {"type": "string"}, "date": {"type": "string"},
    "datetime": {"type": "string"}, "email": {"type": "string"}, "url": {"type": "string"},
    "reference": {"type": "string"}, "number": {"type": "number"}, "integer": {"type": "integer"},
    "boolean": {"type": "boolean"}, "array": {"type": "array"}, "object": {"type": "object"}, "json": {},
}
FieldType = Literal["string", "text", "date", "datetime", "email", "url", "reference", "number", "integer", "boolean",
                    "array", "object", "json"]
assert set(get_args(FieldType)) == set(FIELD_TYPES)
# JSON Schema keywords a field may add to its type (checked as JSON Schema when the schema is defined).
FIELD_KEYWORDS = ("enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
                  "pattern", "format", "items", "minItems", "maxItems")


class FieldDef(BaseModel):
    """One field of a schema: a type, `required`, and optional JSON Schema keywords."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: FieldType
    required: StrictBool = False
    description: str | None = Field(default=None, max_length=1000)
    display_name: str | None = Field(default=None, max_length=200)
    enum: Annotated[list[Any], Field(min_length=1, max_length=500)] | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    exclusiveMinimum: int | float | None = None  # JSON Schema's own spellings
    exclusiveMaximum: int | float | None = None
    minLength: int | None = Field(default=None, ge=0)
    maxLength: int | None = Field(default=None, ge=0)
    pattern: str | None = Field(default=None, max_length=1000)
    format: str | None = Field(default=None, max_length=100)
    items: dict[str, Any] | None = None
    minItems: int | None = Field(default=None, ge=0)
    maxItems: int | None = Field(default=None, ge=0)

    def json_schema(self) -> dict[str, Any]:
        schema = dict(FIELD_TYPES[self.type])
        schema.update({keyword: value for keyword in FIELD_KEYWORDS
                       if (value := getattr(self, keyword)) is not None})
        if self.description:
            schema["description"] = self.description
        return schema


class RecordSchema(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)  # built on first use, not at init (#38)

    project_id: str
    type_name: str
    fields: dict[str, FieldDef]
    display_name: str | None = None
    description: str | None = None
    created_at: datetime
    updated_at: datetime

    @field_serializer("created_at", "updated_at", when_used="json")
    def _timestamp_text(self, moment: datetime) -> str:
        return format_timestamp(moment)

    @property
    def json_schema(self) -> dict[str, Any]:
        return json_schema_of(self.fields)

    def validate_data(self, data: Mapping[str, Any], field: str = "data") -> None:
        """InvalidInput naming the offending field when `data` does not fit the schema."""
        errors = sorted(record_validator(self.json_schema).iter_errors(dict(data)),
                        key=lambda error: [str(part) for part in error.absolute_path])
        if errors:
            raise _invalid(errors[0], field)

    def known_fields(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """`data` without the fields this schema does not define (for what an LLM extracted)."""
        return {name: value for name, value in data.items() if name in self.fields}

    def describe(self) -> str:
        """The schema as an extraction prompt shows it."""
        fields = {name: {"type": definition.type, **({"required": True} if definition.required else {}),
                         **({"description": definition.description} if definition.description else {})}
                  for name, definition in self.fields.items()}
        label = f" ({self.description})" if self.description else ""
        return f"{self.type_name}{label}: {json.dumps(fields, ensure_ascii=False)}"


def check_type_name(type_name: str) -> None:
    if type_name in RESERVED_TYPE_NAMES:
        raise InvalidInput("type_name", f"'{type_name}' is reserved")


def check_fields(fields: Mapping[str, FieldDef]) -> None:
    """Every field's keywords form valid JSON Schema (a bad `pattern` regex, `items` that is no schema…), and its
    regexes are ones RE2 runs (`record_patterns`)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    for name, definition in fields.items():
        try:
            Draft202012Validator.check_schema(definition.json_schema())
        except SchemaError as error:
            raise InvalidInput(f"fields.{name}", f"not valid JSON Schema: {error.message}") from None
        check_patterns(definition.json_schema(), f"fields.{name}")


def json_schema_of(fields: Mapping[str, FieldDef]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: definition.json_schema() for name, definition in fields.items()},
        "required": [name for name, definition in fields.items() if definition.required],
        "additionalProperties": False,
    }


def _invalid(error: Any, field: str) -> InvalidInput:
    path = [str(part) for part in error.absolute_path]
    message = str(error.message)
    if error.validator == "required":
        missing = re.match(r"'(.+?)' is a required property", message)
        return InvalidInput(".".join([field, *path, *([missing[1]] if missing else [])]), "required")
    if error.validator == "additionalProperties":
        unexpected = re.search(r"\('(.+?)' was unexpected", message)
        if unexpected:
            return InvalidInput(".".join([field, *path, unexpected[1]]), "not a field of this schema")
    return InvalidInput(".".join([field, *path]), message)


class RecordVisibility(StrEnum):
    PUBLIC = "public"  # every subject of the project
    SHARED = "shared"  # the same: for collaborators to read, as Mnexium names it
    PRIVATE = "private"  # its owner and collaborators only


class DataRecord(BaseModel):
    """One record of a schema."""

    model_config = ConfigDict(frozen=True, defer_build=True)  # built on first use, not at init (#38)

    record_id: str
    project_id: str
    type_name: str
    owner_id: str | None = None
    visibility: RecordVisibility = RecordVisibility.PUBLIC
    collaborators: list[str] = Field(default_factory=list)
    data: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None = None
    revision: int = 1

    @field_serializer("created_at", "updated_at", "deleted_at", when_used="json")
    def _timestamp_text(self, moment: datetime | None) -> str | None:
        return format_timestamp(moment) if moment is not None else None

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None

    @property
    def summary_text(self) -> str:
        """The text projection searches run over: the type, then each field as `name: value`."""
        values = "; ".join(f"{name}: {_plain(value)}" for name, value in self.data.items() if value is not None)
        return f"{self.type_name}: {values}"[:MAX_SUMMARY_CHARS]

    def merged(self, changes: Mapping[str, Any], at: datetime) -> DataRecord:
        """A partial update: the given fields replace theirs (a null removes one)."""
        if self.is_deleted:
            raise Conflict(f"record {self.record_id}: it is deleted")
        data = {**self.data, **changes}
        return self._changed(at, data={name: value for name, value in data.items() if value is not None})

    def deleted(self, at: datetime) -> DataRecord:
        return self if self.is_deleted else self._changed(at, deleted_at=at)

    def _changed(self, at: datetime, **changes: Any) -> DataRecord:
        return self.model_copy(update={**changes, "updated_at": at, "revision": self.revision + 1})

    def visible_to(self, subject_id: str | None) -> bool:
        """Whether chat recall for `subject_id` may inject it."""
        if self.visibility is not RecordVisibility.PRIVATE:
            return True
        return subject_id is not None and (subject_id == self.owner_id or subject_id in self.collaborators)

    @property
    def id(self) -> str:
        return self.record_id

    @property
    def index_scope(self) -> str:
        return record_scope(self.project_id, self.type_name)

    def index_text(self) -> str:
        return self.summary_text

    def index_attributes(self) -> IndexAttributes:
        from zengram.kernel.search import IndexAttributes  # the search models: not at a function's init

        return IndexAttributes(
            type=self.type_name, source_agent=self.owner_id or "", client_id=self.project_id,
            category=RECORD_CATEGORY, active=not self.is_deleted, valid_from=self.created_at,
            created_at=self.created_at, scope=self.index_scope,
        )

    def view(self) -> dict[str, Any]:
        """The record as the API shows it (Mnexium's field names)."""
        shown = self.model_dump(mode="json", exclude={"deleted_at", "revision"})
        return {**shown, "summary_text": self.summary_text, "is_deleted": self.is_deleted}


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


# -- query -----------------------------------------------------------------------------------------------------

RECORD_FIELDS = {"record_id", "owner_id", "visibility", "created_at", "updated_at"}


class RecordQuerySpec(BaseModel):
    """Exact field filters, one sort field (`-` for descending), and a page."""

    model_config = ConfigDict(defer_build=True)  # built on first use, not at a function's init (#38)

    where: dict[str, Any] = Field(default_factory=dict)
    order_by: str | None = None
    limit: int = 50
    offset: int = 0

    def apply(self, records: Iterable[DataRecord]) -> list[DataRecord]:
        matching = [record for record in records if not record.is_deleted and self._matches(record)]
        field, descending = _sort_field(self.order_by)
        with_value = [r for r in matching if _field_value(r, field) is not None]
        without = [r for r in matching if _field_value(r, field) is None]
        with_value.sort(key=lambda r: (_sort_key(_field_value(r, field)), r.created_at, r.record_id),
                        reverse=descending)
        without.sort(key=lambda r: (r.created_at, r.record_id), reverse=True)
        ordered = with_value + without  # records lacking the sort field come last either way
        return ordered[self.offset: self.offset + self.limit]

    def _matches(self, record: DataRecord) -> bool:
        return all(_field_value(record, name) == wanted for name, wanted in self.where.items())


def _sort_field(order_by: str | None) -> tuple[str, bool]:
    if not order_by:
        return "created_at", True
    return (order_by[1:], True) if order_by.startswith("-") else (order_by, False)


def _field_value(record: DataRecord, name: str) -> Any:
    if name in record.data:
        return record.data[name]
    if name in RECORD_FIELDS:
        value = getattr(record, name)
        return value.value if isinstance(value, StrEnum) else value
    return None


def _sort_key(value: Any) -> tuple[int, Any]:
    """Numbers before text before anything else, so mixed types still sort."""
    if isinstance(value, bool):
        return 0, int(value)
    if isinstance(value, int | float):
        return 0, value
    if isinstance(value, datetime):
        return 1, format_timestamp(value)
    if isinstance(value, str):
        return 1, value
    return 2, json.dumps(value, sort_keys=True)
