"""The document knowledge base on DynamoDB: `ChunkStore`, `GraphStore` and `IndexJobStore` over one table of its
own (keys `pk`/`sk`, no GSI; separate from the memories' table). Items:

- `FILE` / `<source>`: one file's record (`files_under` is a Query with `begins_with(sk, folder/)`);
- `CHUNK#<chunk id>` / `CHUNK`: one chunk (read in batches by id);
- `FOLDER` / `<path>`: one indexed folder;
- `JOB` / `<job id>`: one job (ids sort by enqueue time); `META` / `SLOT`, `READY`, `COUNTS`: the running slot,
  readiness, and counters (documents, chunks, entities, relations) kept by atomic ADDs in the writes that change them;
- `GRAPH#<source>` / `E#<qualified name>` and `R#<source entity>\x1f<n>`: a file's entities and relations;
  `GNAME#<name>` / `<source>\x1f<qualified>` and `GREF#<target name>` / `<source>\x1f<n>`: copies keyed for the
  walk's lookups (by entity name, by relation target), replaced with the file's graph;
- `EMBED` / `<model id>:<text sha256>`: the embedding cache (adapters/dynamodb/embedding_cache.py).
"""

from __future__ import annotations

import contextlib
import itertools
import random
import time
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from zengram.adapters.dynamodb.schema import error_code
from zengram.adapters.dynamodb.table import DynamoTable, WriteConflict, make_client
from zengram.adapters.dynamodb.writes import WriteOp
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
from zengram.kernel.timestamps import parse_timestamp

Item = dict[str, dict[str, Any]]
PK, SK = "pk", "sk"
SEPARATOR = "\x1f"
_BATCH_WRITE = 25
_UNPROCESSED_ROUNDS = 10
_CAS_ATTEMPTS = 20
TABLE_DEFINITION: dict[str, Any] = {
    "BillingMode": "PAY_PER_REQUEST",
    "AttributeDefinitions": [{"AttributeName": PK, "AttributeType": "S"}, {"AttributeName": SK, "AttributeType": "S"}],
    "KeySchema": [{"AttributeName": PK, "KeyType": "HASH"}, {"AttributeName": SK, "KeyType": "RANGE"}],
}


def _s(value: str) -> dict[str, str]:
    return {"S": value}


def _n(value: int) -> dict[str, str]:
    return {"N": str(value)}


def _key(pk: str, sk: str) -> Item:
    return {PK: _s(pk), SK: _s(sk)}


def _data(item: Item) -> str:
    return str(item["data"]["S"])


class _Table(DynamoTable):
    """The shared low-level table plus batch writes and whole-partition reads."""

    def batch(self, puts: Sequence[Item] = (), deletes: Sequence[Item] = ()) -> None:
        requests = [{"PutRequest": {"Item": item}} for item in puts] + \
                   [{"DeleteRequest": {"Key": key}} for key in deletes]
        for start in range(0, len(requests), _BATCH_WRITE):
            pending: dict[str, Any] = {self.name: requests[start : start + _BATCH_WRITE]}
            for round_number in range(_UNPROCESSED_ROUNDS):
                unprocessed = self.client.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
                if not unprocessed:
                    break
                pending = unprocessed
                time.sleep(random.uniform(0, 0.05 * 2 ** round_number))  # DynamoDB asks us to back off
            else:
                raise RuntimeError("DynamoDB left writes unprocessed; try again later")

    def partition(self, pk: str, prefix: str | None = None, **params: Any) -> Iterator[Item]:
        condition = "#pk = :pk" + (" AND begins_with(#sk, :prefix)" if prefix else "")
        values: dict[str, Any] = {":pk": _s(pk), **({":prefix": _s(prefix)} if prefix else {})}
        names = {"#pk": PK, **({"#sk": SK} if prefix else {})}
        request = {"KeyConditionExpression": condition, "ExpressionAttributeValues": {
            **values, **params.pop("ExpressionAttributeValues", {})}, "ExpressionAttributeNames": {
            **names, **params.pop("ExpressionAttributeNames", {})}, "ConsistentRead": True, **params}
        yield from self.query(request, page_size=500)

    def add_counts(self, **deltas: int) -> WriteOp:
        changed = {name: delta for name, delta in deltas.items() if delta}
        expression = "ADD " + ", ".join(f"#{name} :{name}" for name in changed)
        return WriteOp("Update", {"Key": _key("META", "COUNTS"), "UpdateExpression": expression,
                                  "ExpressionAttributeNames": {f"#{name}": name for name in changed},
                                  "ExpressionAttributeValues": {f":{name}": _n(delta)
                                                                for name, delta in changed.items()}})

    def counts(self) -> dict[str, int]:
        item = self.get(_key("META", "COUNTS")) or {}
        return {name: int(value["N"]) for name, value in item.items() if "N" in value}


class DynamoDBDocumentTables:
    """Opens (and, with `create`, creates) the table; `chunks`, `graph` and `jobs` are the three ports on it."""

    def __init__(self, table_name: str, *, region: str | None = None, create: bool = False,
                 client: Any | None = None) -> None:
        self.client = client or make_client(region=region)
        self.table_name = table_name
        if create:
            ensure_table(self.client, table_name)
        table = _Table(self.client, table_name)
        self.chunks = DynamoDBChunkStore(table)
        self.graph = DynamoDBGraphStore(table)
        self.jobs = DynamoDBIndexJobStore(table)
        self.table = table  # for the embedding cache beside them (adapters/dynamodb/embedding_cache.py)


def ensure_table(client: Any, table_name: str) -> None:
    try:
        client.create_table(TableName=table_name, **TABLE_DEFINITION)
    except Exception as error:
        if error_code(error) != "ResourceInUseException":
            raise
    client.get_waiter("table_exists").wait(TableName=table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 120})


class DynamoDBChunkStore:
    def __init__(self, table: _Table) -> None:
        self._table = table

    def put_chunks(self, chunks: Sequence[Chunk]) -> None:
        self._table.batch(puts=[{**_key(f"CHUNK#{chunk.id}", "CHUNK"), "data": _s(chunk.model_dump_json())}
                                for chunk in chunks])

    def delete_chunks(self, chunk_ids: Sequence[str]) -> None:
        self._table.batch(deletes=[_key(f"CHUNK#{chunk_id}", "CHUNK") for chunk_id in dict.fromkeys(chunk_ids)])

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        items = self._table.get_many([_key(f"CHUNK#{chunk_id}", "CHUNK") for chunk_id in dict.fromkeys(chunk_ids)])
        chunks = [Chunk.model_validate_json(_data(item)) for item in items]
        return {chunk.id: chunk for chunk in chunks}

    def get_file(self, source: str) -> FileRecord | None:
        item = self._table.get(_key("FILE", source))
        return FileRecord.model_validate_json(_data(item)) if item else None

    def put_file(self, record: FileRecord) -> None:
        """The record and the counters move together (one transaction, conditioned on the record read)."""
        for _ in range(_CAS_ATTEMPTS):
            item = self._table.get(_key("FILE", record.source))
            previous = FileRecord.model_validate_json(_data(item)) if item else None
            deltas = _count_deltas(previous, record)
            put = WriteOp("Put", {"Item": {**_key("FILE", record.source), "data": _s(record.model_dump_json())},
                                  **_unchanged(item)})
            try:
                self._table.write([put, self._table.add_counts(**deltas)] if any(deltas.values()) else [put])
                return
            except WriteConflict:
                continue
        raise WriteConflict(f"file record {record.source} kept changing")

    def delete_file(self, source: str) -> None:
        for _ in range(_CAS_ATTEMPTS):
            item = self._table.get(_key("FILE", source))
            if item is None:
                return
            deltas = _count_deltas(FileRecord.model_validate_json(_data(item)), None)
            delete = WriteOp("Delete", {"Key": _key("FILE", source), **_unchanged(item)})
            try:
                self._table.write([delete, self._table.add_counts(**deltas)] if any(deltas.values()) else [delete])
                return
            except WriteConflict:
                continue
        raise WriteConflict(f"file record {source} kept changing")

    def files_under(self, folder: str, *, recursive: bool) -> Iterator[FileRecord]:
        prefix = folder.rstrip("/") + "/"
        for item in self._table.partition("FILE", prefix):
            source = str(item[SK]["S"])
            if recursive or "/" not in source[len(prefix):]:
                yield FileRecord.model_validate_json(_data(item))

    def put_folder(self, folder: IndexedFolder) -> None:
        self._table.batch(puts=[{**_key("FOLDER", folder.folder_path), "data": _s(folder.model_dump_json())}])

    def delete_folder(self, folder_path: str) -> None:
        self._table.batch(deletes=[_key("FOLDER", folder_path)])

    def folders(self) -> list[IndexedFolder]:
        return [IndexedFolder.model_validate_json(_data(item)) for item in self._table.partition("FOLDER")]

    def counts(self) -> IndexCounts:
        counts = self._table.counts()
        return IndexCounts(documents=counts.get("documents", 0), chunks=counts.get("chunks", 0))

    def clear(self) -> None:
        files = list(self._table.partition("FILE"))
        chunk_ids = [chunk_id for item in files for chunk_id in FileRecord.model_validate_json(_data(item)).chunk_ids()]
        self._table.batch(deletes=[_key(f"CHUNK#{chunk_id}", "CHUNK") for chunk_id in chunk_ids])
        folders = list(self._table.partition("FOLDER"))
        self._table.batch(deletes=[{PK: item[PK], SK: item[SK]} for item in [*files, *folders]])
        counts = self._table.counts()
        reset = {name: -counts.get(name, 0) for name in ("documents", "chunks")}
        if any(reset.values()):
            self._table.write([self._table.add_counts(**reset)])


def _count_deltas(before: FileRecord | None, after: FileRecord | None) -> dict[str, int]:
    def documents(record: FileRecord | None) -> int:
        return int(record is not None and record.content_hash is not None)

    def chunks(record: FileRecord | None) -> int:
        return record.chunk_count if record is not None else 0

    return {"documents": documents(after) - documents(before), "chunks": chunks(after) - chunks(before)}


def _unchanged(item: Item | None) -> dict[str, Any]:
    """A condition that the item is still as read (absent, or with the same data)."""
    if item is None:
        return {"ConditionExpression": "attribute_not_exists(#pk)", "ExpressionAttributeNames": {"#pk": PK}}
    return {"ConditionExpression": "#data = :data", "ExpressionAttributeNames": {"#data": "data"},
            "ExpressionAttributeValues": {":data": item["data"]}}


class DynamoDBGraphStore:
    def __init__(self, table: _Table) -> None:
        self._table = table

    def replace_file(self, source: str, graph: CodeGraph) -> None:
        old = list(self._table.partition(f"GRAPH#{source}"))
        old_entities = sum(1 for item in old if item[SK]["S"].startswith("E#"))
        stale = [{PK: item[PK], SK: item[SK]} for item in old] + [key for item in old for key in _lookup_keys(item)]
        self._table.batch(deletes=stale)
        puts: list[Item] = []
        for entity in graph.entities:
            data = _s(entity.model_dump_json())
            puts.append({**_key(f"GRAPH#{source}", f"E#{entity.qualified_name}"), "data": data})
            puts += [{**_key(f"GNAME#{name}", f"{source}{SEPARATOR}{entity.qualified_name}"), "data": data}
                     for name in _entity_names(entity)]
        for number, relation in enumerate(graph.relations):
            data = _s(relation.model_dump_json())
            puts.append({**_key(f"GRAPH#{source}", f"R#{relation.source_entity}{SEPARATOR}{number:06d}"),
                         "data": data, "chunk_id": _s(relation.chunk_id)})
            puts.append({**_key(f"GREF#{relation.target_key}", f"{source}{SEPARATOR}{number:06d}"), "data": data})
        self._table.batch(puts=puts)
        deltas = {"entities": len(graph.entities) - old_entities,
                  "relations": len(graph.relations) - (len(old) - old_entities)}
        if any(deltas.values()):
            self._table.write([self._table.add_counts(**deltas)])

    def named(self, keys: Sequence[str], limit: int) -> list[CodeEntity]:
        found: dict[str, CodeEntity] = {}
        for key in dict.fromkeys(key.lower() for key in keys):
            for item in self._table.partition(f"GNAME#{key}"):
                entity = CodeEntity.model_validate_json(_data(item))
                found[entity.id] = entity
                if len(found) >= limit:
                    return sorted(found.values(), key=lambda entity: entity.id)
        return sorted(found.values(), key=lambda entity: entity.id)

    def entities(self, entity_ids: Sequence[str]) -> dict[str, CodeEntity]:
        keys = []
        for entity_id in dict.fromkeys(entity_ids):
            source, _, qualified = entity_id.rpartition("::")
            keys.append(_key(f"GRAPH#{source}", f"E#{qualified}"))
        entities = [CodeEntity.model_validate_json(_data(item)) for item in self._table.get_many(keys)]
        return {entity.id: entity for entity in entities}

    def relations_to(self, keys: Sequence[str], limit: int) -> list[Relation]:
        items = (item for key in dict.fromkeys(key.lower() for key in keys) for item in self._table.partition(
            f"GREF#{key}"))
        return [Relation.model_validate_json(_data(item)) for item in itertools.islice(items, limit)]

    def relations_from(self, entity_ids: Sequence[str], limit: int) -> list[Relation]:
        items = (item for entity_id in dict.fromkeys(entity_ids) for item in self._table.partition(
            f"GRAPH#{entity_id.rpartition('::')[0]}", f"R#{entity_id}{SEPARATOR}"))
        return [Relation.model_validate_json(_data(item)) for item in itertools.islice(items, limit)]

    def relations_in(self, chunks: Sequence[tuple[str, str]]) -> dict[str, list[Relation]]:
        wanted: dict[str, set[str]] = {}
        for source, chunk_id in chunks:
            wanted.setdefault(source, set()).add(chunk_id)
        found: dict[str, list[Relation]] = {chunk_id: [] for _, chunk_id in chunks}
        for source, chunk_ids in wanted.items():
            for item in self._table.partition(f"GRAPH#{source}", "R#"):
                if item["chunk_id"]["S"] in chunk_ids:
                    found[item["chunk_id"]["S"]].append(Relation.model_validate_json(_data(item)))
        return found

    def counts(self) -> tuple[int, int]:
        counts = self._table.counts()
        return counts.get("entities", 0), counts.get("relations", 0)

    def clear(self) -> None:
        """Every graph item (a scan: resets are rare) and the graph counters."""
        keys: list[Item] = []
        request: dict[str, Any] = {"TableName": self._table.name, "ProjectionExpression": "#pk, #sk",
                                   "ExpressionAttributeNames": {"#pk": PK, "#sk": SK},
                                   "FilterExpression": "begins_with(#pk, :graph) OR begins_with(#pk, :name) OR "
                                                       "begins_with(#pk, :ref)",
                                   "ExpressionAttributeValues": {":graph": _s("GRAPH#"), ":name": _s("GNAME#"),
                                                                 ":ref": _s("GREF#")}}
        while True:
            page = self._table.client.scan(**request)
            keys += [{PK: item[PK], SK: item[SK]} for item in page.get("Items", [])]
            if "LastEvaluatedKey" not in page:
                break
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        self._table.batch(deletes=keys)
        counts = self._table.counts()
        reset = {name: -counts.get(name, 0) for name in ("entities", "relations")}
        if any(reset.values()):
            self._table.write([self._table.add_counts(**reset)])


def _entity_names(entity: CodeEntity) -> list[str]:
    return list(dict.fromkeys([entity.name_key, entity.qualified_name.lower()]))


def _lookup_keys(item: Item) -> list[Item]:
    """The GNAME/GREF copies of a file's graph item."""
    sort_key = str(item[SK]["S"])
    source = str(item[PK]["S"]).removeprefix("GRAPH#")
    if sort_key.startswith("E#"):
        entity = CodeEntity.model_validate_json(_data(item))
        return [_key(f"GNAME#{name}", f"{source}{SEPARATOR}{entity.qualified_name}") for name in _entity_names(entity)]
    relation = Relation.model_validate_json(_data(item))
    number = sort_key.rsplit(SEPARATOR, 1)[-1]
    return [_key(f"GREF#{relation.target_key}", f"{source}{SEPARATOR}{number}")]


class DynamoDBIndexJobStore:
    def __init__(self, table: _Table) -> None:
        self._table = table

    def put(self, job: IndexJob) -> None:
        self._table.batch(puts=[_job_item(job)])

    def update_progress(self, job: IndexJob) -> IndexJob:
        """Read, apply the progress, write back only if nobody changed the job meanwhile (e.g. a cancel)."""
        for _ in range(_CAS_ATTEMPTS):
            item = self._table.get(_key("JOB", job.id))
            current = IndexJob.model_validate_json(_data(item)) if item else job
            updated = current.advanced(job.progress, job.cursor)
            try:
                self._table.write([WriteOp("Put", {"Item": _job_item(updated), **_unchanged(item)})])
                return updated
            except WriteConflict:
                continue
        raise WriteConflict(f"job {job.id} kept changing")

    def get(self, job_id: str) -> IndexJob | None:
        item = self._table.get(_key("JOB", job_id))
        return IndexJob.model_validate_json(_data(item)) if item else None

    def list_jobs(self, limit: int, offset: int) -> list[IndexJob]:
        jobs: list[IndexJob] = []
        for position, item in enumerate(self._table.partition("JOB", ScanIndexForward=False)):
            if position >= offset + limit:
                break
            if position >= offset:
                jobs.append(IndexJob.model_validate_json(_data(item)))
        return jobs

    def active(self) -> list[IndexJob]:
        items = self._table.partition("JOB", FilterExpression="#status IN (:pending, :running)",
                                      ExpressionAttributeNames={"#status": "status"},
                                      ExpressionAttributeValues={":pending": _s(IndexJobStatus.PENDING.value),
                                                                 ":running": _s(IndexJobStatus.RUNNING.value)})
        return [IndexJob.model_validate_json(_data(item)) for item in items]

    def acquire_slot(self, job_id: str) -> bool:
        try:
            self._table.write([WriteOp("Put", {
                "Item": {**_key("META", "SLOT"), "job_id": _s(job_id)},
                "ConditionExpression": "attribute_not_exists(#pk) OR #job = :job",
                "ExpressionAttributeNames": {"#pk": PK, "#job": "job_id"},
                "ExpressionAttributeValues": {":job": _s(job_id)}})])
        except WriteConflict:
            return False
        return True

    def release_slot(self, job_id: str) -> None:
        with contextlib.suppress(WriteConflict):  # another job holds it (or nobody): nothing of ours to release
            self._table.write([WriteOp("Delete", {
                "Key": _key("META", "SLOT"), "ConditionExpression": "#job = :job",
                "ExpressionAttributeNames": {"#job": "job_id"}, "ExpressionAttributeValues": {":job": _s(job_id)}})])

    def slot_holder(self) -> str | None:
        item = self._table.get(_key("META", "SLOT"))
        return str(item["job_id"]["S"]) if item else None

    def mark_ready(self, at: datetime) -> None:
        self._table.batch(puts=[{**_key("META", "READY"), "since": _s(at.isoformat())}])

    def ready_since(self) -> datetime | None:
        item = self._table.get(_key("META", "READY"))
        return parse_timestamp(item["since"]["S"]) if item else None

    def clear_ready(self) -> None:
        self._table.batch(deletes=[_key("META", "READY")])


def _job_item(job: IndexJob) -> Item:
    return {**_key("JOB", job.id), "status": _s(job.status.value), "data": _s(job.model_dump_json())}

