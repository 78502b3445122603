"""The document knowledge base's records in one SQLite file: files, chunks, folders, jobs and the code graph
(`ChunkStore`, `GraphStore` and `IndexJobStore`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.documents.domain.models import (
    Chunk,
    CodeEntity,
    CodeGraph,
    FileRecord,
    IndexCounts,
    IndexedFolder,
    IndexJob,
    IndexJobStatus,
    Relation,
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS doc_files (
    source TEXT PRIMARY KEY,
    content_hash TEXT,
    chunk_count INTEGER NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS doc_chunks (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS doc_chunks_by_source ON doc_chunks (source);
CREATE TABLE IF NOT EXISTS doc_folders (path TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS doc_jobs (id TEXT PRIMARY KEY, status TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS doc_jobs_by_status ON doc_jobs (status);
CREATE TABLE IF NOT EXISTS doc_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS graph_entities (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    name_key TEXT NOT NULL,
    qualified_key TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS graph_entities_by_name ON graph_entities (name_key);
CREATE INDEX IF NOT EXISTS graph_entities_by_qualified ON graph_entities (qualified_key);
CREATE INDEX IF NOT EXISTS graph_entities_by_source ON graph_entities (source);
CREATE TABLE IF NOT EXISTS graph_relations (
    rowid INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    source_entity TEXT NOT NULL,
    target_key TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS graph_relations_by_target ON graph_relations (target_key);
CREATE INDEX IF NOT EXISTS graph_relations_by_entity ON graph_relations (source_entity);
CREATE INDEX IF NOT EXISTS graph_relations_by_source ON graph_relations (source, chunk_id);
"""
_SLOT = "running_job"
_READY = "ready_since"
_BATCH = 500


def _placeholders(count: int) -> str:
    return ", ".join("?" for _ in range(count))


def _data_of(db: SQLiteDatabase, table: str, ids: Sequence[str]) -> Iterator[str]:
    """The stored JSON of the rows of `table` with these ids, queried in batches SQLite's variable limit allows."""
    for batch in _batches(list(dict.fromkeys(ids))):
        rows = db.connection().execute(
            f"SELECT data FROM {table} WHERE id IN ({_placeholders(len(batch))})", batch).fetchall()
        yield from (row["data"] for row in rows)


def _batches(values: Sequence[str]) -> Iterator[list[str]]:
    for start in range(0, len(values), _BATCH):
        yield list(values[start : start + _BATCH])


def _under(folder: str, source: str, recursive: bool) -> bool:
    prefix = folder.rstrip("/") + "/"
    if not source.startswith(prefix):
        return False
    return recursive or "/" not in source[len(prefix):]


def open_document_database(path: Path) -> SQLiteDatabase:
    """One file for the three stores below (each takes the database; closing it is the caller's)."""
    return SQLiteDatabase(path, SCHEMA)


class SQLiteChunkStore:
    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    def put_chunks(self, chunks: Sequence[Chunk]) -> None:
        with self._db.transaction() as tx:
            tx.executemany("INSERT OR REPLACE INTO doc_chunks (id, source, data) VALUES (?, ?, ?)",
                           [(chunk.id, chunk.source, chunk.model_dump_json()) for chunk in chunks])

    def delete_chunks(self, chunk_ids: Sequence[str]) -> None:
        if not chunk_ids:
            return
        with self._db.transaction() as tx:
            for batch in _batches(chunk_ids):
                tx.execute(f"DELETE FROM doc_chunks WHERE id IN ({_placeholders(len(batch))})", batch)

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        chunks = (Chunk.model_validate_json(data) for data in _data_of(self._db, "doc_chunks", chunk_ids))
        return {chunk.id: chunk for chunk in chunks}

    def get_file(self, source: str) -> FileRecord | None:
        row = self._db.connection().execute("SELECT data FROM doc_files WHERE source = ?", (source,)).fetchone()
        return FileRecord.model_validate_json(row["data"]) if row else None

    def put_file(self, record: FileRecord) -> None:
        with self._db.transaction() as tx:
            tx.execute("INSERT OR REPLACE INTO doc_files (source, content_hash, chunk_count, data) VALUES (?, ?, ?, ?)",
                       (record.source, record.content_hash, record.chunk_count, record.model_dump_json()))

    def delete_file(self, source: str) -> None:
        with self._db.transaction() as tx:
            tx.execute("DELETE FROM doc_files WHERE source = ?", (source,))

    def files_under(self, folder: str, *, recursive: bool) -> Iterator[FileRecord]:
        prefix = folder.rstrip("/") + "/"
        # source >= prefix AND source < prefix + U+10FFFF: the primary key's range, without LIKE's wildcards
        rows = self._db.connection().execute(
            "SELECT source, data FROM doc_files WHERE source >= ? AND source < ? ORDER BY source",
            (prefix, prefix + "\U0010ffff")).fetchall()
        for row in rows:
            if _under(folder, row["source"], recursive):
                yield FileRecord.model_validate_json(row["data"])

    def put_folder(self, folder: IndexedFolder) -> None:
        with self._db.transaction() as tx:
            tx.execute("INSERT OR REPLACE INTO doc_folders (path, data) VALUES (?, ?)",
                       (folder.folder_path, folder.model_dump_json()))

    def delete_folder(self, folder_path: str) -> None:
        with self._db.transaction() as tx:
            tx.execute("DELETE FROM doc_folders WHERE path = ?", (folder_path,))

    def folders(self) -> list[IndexedFolder]:
        rows = self._db.connection().execute("SELECT data FROM doc_folders ORDER BY path").fetchall()
        return [IndexedFolder.model_validate_json(row["data"]) for row in rows]

    def counts(self) -> IndexCounts:
        connection = self._db.connection()
        documents = connection.execute("SELECT COUNT(*) FROM doc_files WHERE content_hash IS NOT NULL").fetchone()[0]
        chunks = connection.execute("SELECT COUNT(*) FROM doc_chunks").fetchone()[0]
        return IndexCounts(documents=int(documents), chunks=int(chunks))

    def clear(self) -> None:
        with self._db.transaction() as tx:
            for table in ("doc_files", "doc_chunks", "doc_folders"):
                tx.execute(f"DELETE FROM {table}")


class SQLiteGraphStore:
    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    def replace_file(self, source: str, graph: CodeGraph) -> None:
        with self._db.transaction() as tx:
            tx.execute("DELETE FROM graph_entities WHERE source = ?", (source,))
            tx.execute("DELETE FROM graph_relations WHERE source = ?", (source,))
            tx.executemany(
                "INSERT OR REPLACE INTO graph_entities (id, source, name_key, qualified_key, data) "
                "VALUES (?, ?, ?, ?, ?)",
                [(entity.id, source, entity.name_key, entity.qualified_name.lower(), entity.model_dump_json())
                 for entity in graph.entities])
            tx.executemany(
                "INSERT INTO graph_relations (source, source_entity, target_key, chunk_id, data) "
                "VALUES (?, ?, ?, ?, ?)",
                [(source, relation.source_entity, relation.target_key, relation.chunk_id, relation.model_dump_json())
                 for relation in graph.relations])

    def named(self, keys: Sequence[str], limit: int) -> list[CodeEntity]:
        found: dict[str, CodeEntity] = {}
        for batch in _batches(list(dict.fromkeys(key.lower() for key in keys))):
            marks = _placeholders(len(batch))
            rows = self._db.connection().execute(
                f"SELECT data FROM graph_entities WHERE name_key IN ({marks}) OR qualified_key IN ({marks}) "
                "ORDER BY id LIMIT ?", [*batch, *batch, limit - len(found)]).fetchall()
            for row in rows:
                entity = CodeEntity.model_validate_json(row["data"])
                found[entity.id] = entity
            if len(found) >= limit:
                break
        return sorted(found.values(), key=lambda entity: entity.id)

    def entities(self, entity_ids: Sequence[str]) -> dict[str, CodeEntity]:
        entities = (CodeEntity.model_validate_json(data) for data in _data_of(self._db, "graph_entities", entity_ids))
        return {entity.id: entity for entity in entities}

    def relations_to(self, keys: Sequence[str], limit: int) -> list[Relation]:
        return self._relations("target_key", [key.lower() for key in keys], limit)

    def relations_from(self, entity_ids: Sequence[str], limit: int) -> list[Relation]:
        return self._relations("source_entity", entity_ids, limit)

    def relations_in(self, chunks: Sequence[tuple[str, str]]) -> dict[str, list[Relation]]:
        found: dict[str, list[Relation]] = {}
        for source, chunk_id in chunks:
            rows = self._db.connection().execute(
                "SELECT data FROM graph_relations WHERE source = ? AND chunk_id = ? ORDER BY rowid",
                (source, chunk_id)).fetchall()
            found[chunk_id] = [Relation.model_validate_json(row["data"]) for row in rows]
        return found

    def _relations(self, column: str, values: Sequence[str], limit: int) -> list[Relation]:
        relations: list[Relation] = []
        for batch in _batches(list(dict.fromkeys(values))):
            rows = self._db.connection().execute(
                f"SELECT data FROM graph_relations WHERE {column} IN ({_placeholders(len(batch))}) ORDER BY rowid "
                "LIMIT ?", [*batch, limit - len(relations)]).fetchall()
            relations += [Relation.model_validate_json(row["data"]) for row in rows]
            if len(relations) >= limit:
                break
        return relations

    def counts(self) -> tuple[int, int]:
        connection = self._db.connection()
        entities = connection.execute("SELECT COUNT(*) FROM graph_entities").fetchone()[0]
        relations = connection.execute("SELECT COUNT(*) FROM graph_relations").fetchone()[0]
        return int(entities), int(relations)

    def clear(self) -> None:
        with self._db.transaction() as tx:
            tx.execute("DELETE FROM graph_entities")
            tx.execute("DELETE FROM graph_relations")


class SQLiteIndexJobStore:
    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    def put(self, job: IndexJob) -> None:
        with self._db.transaction() as tx:
            tx.execute("INSERT OR REPLACE INTO doc_jobs (id, status, data) VALUES (?, ?, ?)",
                       (job.id, job.status.value, job.model_dump_json()))

    def update_progress(self, job: IndexJob) -> IndexJob:
        with self._db.transaction() as tx:
            row = tx.execute("SELECT data FROM doc_jobs WHERE id = ?", (job.id,)).fetchone()
            current = IndexJob.model_validate_json(row["data"]) if row else job
            updated = current.advanced(job.progress, job.cursor)
            tx.execute("INSERT OR REPLACE INTO doc_jobs (id, status, data) VALUES (?, ?, ?)",
                       (updated.id, updated.status.value, updated.model_dump_json()))
        return updated

    def get(self, job_id: str) -> IndexJob | None:
        row = self._db.connection().execute("SELECT data FROM doc_jobs WHERE id = ?", (job_id,)).fetchone()
        return IndexJob.model_validate_json(row["data"]) if row else None

    def list_jobs(self, limit: int, offset: int) -> list[IndexJob]:
        rows = self._db.connection().execute("SELECT data FROM doc_jobs ORDER BY id DESC LIMIT ? OFFSET ?",
                                             (limit, offset)).fetchall()
        return [IndexJob.model_validate_json(row["data"]) for row in rows]

    def active(self) -> list[IndexJob]:
        rows = self._db.connection().execute(
            "SELECT data FROM doc_jobs WHERE status IN (?, ?) ORDER BY id",
            (IndexJobStatus.PENDING.value, IndexJobStatus.RUNNING.value)).fetchall()
        return [IndexJob.model_validate_json(row["data"]) for row in rows]

    def acquire_slot(self, job_id: str) -> bool:
        with self._db.transaction() as tx:
            row = tx.execute("SELECT value FROM doc_meta WHERE key = ?", (_SLOT,)).fetchone()
            if row is not None and row["value"] != job_id:
                return False
            tx.execute("INSERT OR REPLACE INTO doc_meta (key, value) VALUES (?, ?)", (_SLOT, job_id))
        return True

    def release_slot(self, job_id: str) -> None:
        with self._db.transaction() as tx:
            tx.execute("DELETE FROM doc_meta WHERE key = ? AND value = ?", (_SLOT, job_id))

    def slot_holder(self) -> str | None:
        return self._meta(_SLOT)

    def mark_ready(self, at: datetime) -> None:
        with self._db.transaction() as tx:
            tx.execute("INSERT OR REPLACE INTO doc_meta (key, value) VALUES (?, ?)", (_READY, at.isoformat()))

    def ready_since(self) -> datetime | None:
        value = self._meta(_READY)
        return datetime.fromisoformat(value).astimezone(UTC) if value else None

    def clear_ready(self) -> None:
        with self._db.transaction() as tx:
            tx.execute("DELETE FROM doc_meta WHERE key = ?", (_READY,))

    def _meta(self, key: str) -> str | None:
        row = self._db.connection().execute("SELECT value FROM doc_meta WHERE key = ?", (key,)).fetchone()
        return str(row["value"]) if row else None
