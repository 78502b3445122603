"""Response bodies of the record and record schema routes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from zengram.chat.domain.records import DataRecord, RecordSchema


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

