"""The embedded `RecordBase`: `record_schemas` and `data_records` tables in the records file."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.chat.domain.records import DataRecord, RecordSchema
from zengram.kernel.errors import Conflict, StaleRevision
from zengram.kernel.timestamps import format_timestamp

SCHEMA = """
CREATE TABLE IF NOT EXISTS record_schemas (
    project_id TEXT NOT NULL,
    type_name TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (project_id, type_name)
);
CREATE TABLE IF NOT EXISTS data_records (
    record_id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    type_name TEXT NOT NULL,
    deleted INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    revision INTEGER NOT NULL,
    index_pending INTEGER NOT NULL DEFAULT 1,
    pending_at TEXT,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS data_records_by_type ON data_records (project_id, type_name, created_at, record_id);
CREATE INDEX IF NOT EXISTS data_records_pending ON data_records (pending_at) WHERE index_pending = 1;
"""


def _record(row: sqlite3.Row) -> DataRecord:
    return DataRecord.model_validate_json(row["body"])


class SQLiteRecordBase:
    def __init__(self, path: Path) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    # -- schemas -------------------------------------------------------------------------------------------------

    def put_schema(self, schema: RecordSchema) -> RecordSchema:
        with self._db.transaction() as tx:
            row = tx.execute("SELECT body FROM record_schemas WHERE project_id = ? AND type_name = ?",
                             (schema.project_id, schema.type_name)).fetchone()
            if row is not None:
                schema = schema.model_copy(update={"created_at": RecordSchema.model_validate_json(row[0]).created_at})
            tx.execute("INSERT OR REPLACE INTO record_schemas (project_id, type_name, body) VALUES (?, ?, ?)",
                       (schema.project_id, schema.type_name, schema.model_dump_json()))
        return schema

    def schema(self, project_id: str, type_name: str) -> RecordSchema | None:
        row = self._db.connection().execute("SELECT body FROM record_schemas WHERE project_id = ? AND type_name = ?",
                                            (project_id, type_name)).fetchone()
        return RecordSchema.model_validate_json(row[0]) if row is not None else None

    def schemas(self, project_id: str) -> list[RecordSchema]:
        rows = self._db.connection().execute(
            "SELECT body FROM record_schemas WHERE project_id = ? ORDER BY type_name", (project_id,))
        return [RecordSchema.model_validate_json(row[0]) for row in rows]

    # -- records -------------------------------------------------------------------------------------------------

    def insert(self, record: DataRecord) -> DataRecord:
        try:
            with self._db.transaction() as tx:
                tx.execute(
                    "INSERT INTO data_records (record_id, project_id, type_name, deleted, created_at, revision, "
                    "index_pending, pending_at, body) VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?)",
                    (record.record_id, record.project_id, record.type_name, int(record.is_deleted),
                     format_timestamp(record.created_at), record.revision, format_timestamp(record.updated_at),
                     record.model_dump_json()))
        except sqlite3.IntegrityError:
            raise Conflict(f"record {record.record_id} already exists") from None
        return record

    def get(self, project_id: str, type_name: str, record_id: str) -> DataRecord | None:
        row = self._db.connection().execute(
            "SELECT body FROM data_records WHERE record_id = ? AND project_id = ? AND type_name = ?",
            (record_id, project_id, type_name)).fetchone()
        return _record(row) if row is not None else None

    def get_many(self, record_ids: Sequence[str]) -> dict[str, DataRecord]:
        ids = list(dict.fromkeys(record_ids))
        found: dict[str, DataRecord] = {}
        for start in range(0, len(ids), 500):
            batch = ids[start:start + 500]
            rows = self._db.connection().execute(
                f"SELECT body FROM data_records WHERE record_id IN ({', '.join('?' for _ in batch)})", batch)
            found.update((record.record_id, record) for record in map(_record, rows))
        return found

    def save(self, record: DataRecord, expected_revision: int) -> DataRecord:
        with self._db.transaction() as tx:
            cursor = tx.execute(
                "UPDATE data_records SET deleted = ?, revision = ?, index_pending = 1, pending_at = ?, body = ? "
                "WHERE record_id = ? AND revision = ?",
                (int(record.is_deleted), record.revision, format_timestamp(record.updated_at),
                 record.model_dump_json(), record.record_id, expected_revision))
        if cursor.rowcount != 1:
            raise StaleRevision(f"record {record.record_id} changed meanwhile (or does not exist); read it again")
        return record

    def records(self, project_id: str, type_name: str) -> Iterator[DataRecord]:
        last = ("", "")
        while True:
            rows = self._db.connection().execute(
                "SELECT created_at, record_id, body FROM data_records WHERE project_id = ? AND type_name = ? "
                "AND deleted = 0 AND (created_at, record_id) > (?, ?) ORDER BY created_at, record_id LIMIT 500",
                (project_id, type_name, *last)).fetchall()
            if not rows:
                return
            yield from (_record(row) for row in rows)
            last = (rows[-1]["created_at"], rows[-1]["record_id"])

    def pending_index(self, limit: int) -> list[DataRecord]:
        rows = self._db.connection().execute(
            "SELECT body FROM data_records WHERE index_pending = 1 ORDER BY pending_at, record_id LIMIT ?", (limit,))
        return [_record(row) for row in rows]

    def mark_indexed(self, revisions: Mapping[str, int]) -> None:
        with self._db.transaction() as tx:
            tx.executemany("UPDATE data_records SET index_pending = 0, pending_at = NULL "
                           "WHERE record_id = ? AND revision = ?", list(revisions.items()))

    def iter_all(self) -> Iterator[DataRecord]:
        last = ""
        while True:
            rows = self._db.connection().execute(
                "SELECT record_id, body FROM data_records WHERE record_id > ? ORDER BY record_id LIMIT 500",
                (last,)).fetchall()
            if not rows:
                return
            yield from (_record(row) for row in rows)
            last = rows[-1]["record_id"]
