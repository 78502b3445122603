"""The AWS `RecordBase` (chat_ports.py): schemas in their project's partition (`RSCHEMA#<project>`); one item per
record (`REC#<id>`), listed per type through `by-client` (`RECORDS#<project>#<type>`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from zengram.adapters.dynamodb.chat_items import (
    BODY,
    REVISION,
    ChatTable,
    WriteConflict,
    all_of,
    key,
    listed_by,
    part,
    pending,
    put_if_absent,
)
from zengram.adapters.dynamodb.items import Item, number, string, timestamp
from zengram.adapters.dynamodb.schema import PENDING_PK, PENDING_SK
from zengram.adapters.dynamodb.table import make_client
from zengram.adapters.dynamodb.writes import Expression, WriteOp
from zengram.chat.domain.records import DataRecord, RecordSchema
from zengram.kernel.errors import Conflict, StaleRevision
from zengram.kernel.timestamps import parse_timestamp

PENDING_MARK = "CHAT_PENDING_RECORD"
ALL_MARK = "DATA_RECORD"


def schemas_partition(project_id: str) -> str:
    return f"RSCHEMA#{part(project_id)}"


def records_partition(project_id: str, type_name: str) -> str:
    return f"RECORDS#{part(project_id)}#{part(type_name)}"


def record_key(record_id: str) -> Item:
    return key(f"REC#{record_id}", "REC")


def _record_item(record: DataRecord) -> Item:
    return {**record_key(record.record_id), BODY: string(record.model_dump_json()), REVISION: number(record.revision),
            **listed_by(records_partition(record.project_id, record.type_name), record.created_at, record.record_id),
            **all_of(ALL_MARK, record.created_at, record.record_id),
            **pending(PENDING_MARK, record.updated_at, record.record_id)}


def _record(item: Item) -> DataRecord:
    return DataRecord.model_validate_json(item[BODY]["S"])


def _schema(item: Item) -> RecordSchema:
    return RecordSchema.model_validate_json(item[BODY]["S"]).model_copy(
        update={"created_at": parse_timestamp(item["created_at"]["S"])})


class DynamoDBRecordBase:
    def __init__(self, table_name: str, *, region: str | None = None, client: Any | None = None) -> None:
        self._table = ChatTable(client or make_client(region=region), table_name)

    def put_schema(self, schema: RecordSchema) -> RecordSchema:
        expression = Expression()
        created = expression.name("created_at")
        update = (f"SET {expression.equals(BODY, string(schema.model_dump_json()))}, "
                  f"{created} = if_not_exists({created}, {expression.value(timestamp(schema.created_at))})")
        stored = self._table.update(key(schemas_partition(schema.project_id), schema.type_name), expression, update,
                                    returning=True)
        assert stored is not None
        return _schema(stored)

    def schema(self, project_id: str, type_name: str) -> RecordSchema | None:
        item = self._table.get(key(schemas_partition(project_id), type_name))
        return _schema(item) if item is not None else None

    def schemas(self, project_id: str) -> list[RecordSchema]:
        return [_schema(item) for item in self._table.partition(schemas_partition(project_id))]

    def insert(self, record: DataRecord) -> DataRecord:
        try:
            self._table.write([put_if_absent(_record_item(record))])
        except WriteConflict:
            raise Conflict(f"record {record.record_id} already exists") from None
        return record

    def get(self, project_id: str, type_name: str, record_id: str) -> DataRecord | None:
        item = self._table.get(record_key(record_id))
        record = _record(item) if item is not None else None
        return record if record is not None and (record.project_id, record.type_name) == (project_id, type_name) \
            else None

    def get_many(self, record_ids: Sequence[str]) -> dict[str, DataRecord]:
        items = self._table.get_many([record_key(record_id) for record_id in dict.fromkeys(record_ids)])
        return {record.record_id: record for record in map(_record, items)}

    def save(self, record: DataRecord, expected_revision: int) -> DataRecord:
        expression = Expression()
        op = WriteOp("Put", {"Item": _record_item(record), **expression.params(
            ConditionExpression=expression.equals(REVISION, number(expected_revision)))})
        try:
            self._table.write([op])
        except WriteConflict:
            raise StaleRevision(f"record {record.record_id} changed meanwhile (or does not exist); read it again") \
                from None
        return record

    def records(self, project_id: str, type_name: str) -> Iterator[DataRecord]:
        for item in self._table.by_client(records_partition(project_id, type_name)):
            record = _record(item)
            if not record.is_deleted:
                yield record

    def pending_index(self, limit: int) -> list[DataRecord]:
        return [_record(item) for item in self._table.fresh(self._table.pending_keys(PENDING_MARK, limit))]

    def mark_indexed(self, revisions: Mapping[str, int]) -> None:
        for record_id, revision in revisions.items():
            expression = Expression()
            try:
                self._table.update(record_key(record_id), expression,
                                   f"REMOVE {expression.name(PENDING_PK)}, {expression.name(PENDING_SK)}",
                                   expression.equals(REVISION, number(revision)))
            except WriteConflict:  # changed again since: it stays pending
                continue

    def iter_all(self) -> Iterator[DataRecord]:
        for item in self._table.by_created(ALL_MARK):
            yield _record(item)
