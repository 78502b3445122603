"""Records: schemas, CRUD, query and search (`/records…` as the SDK calls them)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from zengram.chat.api import PREFIX
from zengram.chat.api.deps import ChatDep, ProjectDep
from zengram.chat.api.schemas import CHAT_ERRORS, DeletedBody
from zengram.chat.api.schemas.records import (
    RecordHitOut,
    RecordHitsBody,
    RecordOut,
    RecordsBody,
    SchemaOut,
    SchemasBody,
)
from zengram.chat.domain.data_requests import RecordInsert, RecordQueryIn, RecordSearchIn, RecordUpdate, SchemaDefine
from zengram.chat.domain.records import TYPE_NAME_PATTERN

router = APIRouter(prefix=PREFIX, tags=["chat: records"], responses=CHAT_ERRORS)
TypeNamePath = Annotated[str, Path(pattern=TYPE_NAME_PATTERN)]
RecordIdPath = Annotated[str, Path(min_length=1, max_length=100)]


@router.post("/records/schemas", response_model=SchemaOut)
def define_schema(body: SchemaDefine, chat: ChatDep, project: ProjectDep) -> SchemaOut:
    """Defines a schema, or replaces one of the same type name (its records are validated from then on)."""
    return SchemaOut.of(chat.records.define_schema(project, body))


@router.get("/records/schemas", response_model=SchemasBody)
def list_schemas(chat: ChatDep, project: ProjectDep) -> SchemasBody:
    return SchemasBody(schemas=[SchemaOut.of(schema) for schema in chat.records.schemas(project)])


@router.get("/records/schemas/{type_name}", response_model=SchemaOut)
def get_schema(type_name: TypeNamePath, chat: ChatDep, project: ProjectDep) -> SchemaOut:
    return SchemaOut.of(chat.records.schema(project, type_name))


@router.post("/records/{type_name}", status_code=201, response_model=RecordOut)
def insert_record(type_name: TypeNamePath, body: RecordInsert, chat: ChatDep, project: ProjectDep) -> RecordOut:
    return RecordOut.of(chat.records.insert(project, type_name, body))


@router.post("/records/{type_name}/query", response_model=RecordsBody)
def query_records(type_name: TypeNamePath, body: RecordQueryIn, chat: ChatDep, project: ProjectDep) -> RecordsBody:
    """Exact field filters (`where`), one sort field (`order_by`, `-` for descending), a page."""
    found = chat.records.query(project, type_name, body)
    return RecordsBody(records=[RecordOut.of(record) for record in found], count=len(found))


@router.post("/records/{type_name}/search", response_model=RecordHitsBody)
def search_records(type_name: TypeNamePath, body: RecordSearchIn, chat: ChatDep, project: ProjectDep
                   ) -> RecordHitsBody:
    """Hybrid search (vector and keyword, fused) over each record's text projection."""
    hits = chat.records.search(project, type_name, body.query, body.limit)
    return RecordHitsBody(count=len(hits), records=[
        RecordHitOut(**RecordOut.of(hit.record).model_dump(), similarity=hit.similarity) for hit in hits])


@router.get("/records/{type_name}/{record_id}", response_model=RecordOut)
def get_record(type_name: TypeNamePath, record_id: RecordIdPath, chat: ChatDep, project: ProjectDep) -> RecordOut:
    return RecordOut.of(chat.records.get(project, type_name, record_id))


@router.put("/records/{type_name}/{record_id}", response_model=RecordOut)
def update_record(type_name: TypeNamePath, record_id: RecordIdPath, body: RecordUpdate, chat: ChatDep,
                  project: ProjectDep) -> RecordOut:
    """A partial merge of `data` (a null removes a field), validated against the schema."""
    return RecordOut.of(chat.records.update(project, type_name, record_id, body.data))


@router.delete("/records/{type_name}/{record_id}", response_model=DeletedBody)
def delete_record(type_name: TypeNamePath, record_id: RecordIdPath, chat: ChatDep, project: ProjectDep
                  ) -> DeletedBody:
    chat.records.delete(project, type_name, record_id)
    return DeletedBody(ok=True, deleted=True)
