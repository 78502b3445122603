"""The AWS `SubjectMemoryStore` (chat_ports.py): one item per memory (`SMEM#<id>`), and one text guard per active
memory (`SMEMTEXT#<project>#<subject>#<text hash>`, naming the memory that holds it) so that a subject's active
memories never repeat a text, even under concurrent creates. `seen_count` and `last_seen_at` are attributes of
their own, moved only by `record_recall`'s atomic ADD, so an edit saved meanwhile never loses a recall."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from zengram.adapters.dynamodb.chat_items import (
    BODY,
    REVISION,
    ChatTable,
    WriteConflict,
    all_of,
    cancelled_reasons,
    key,
    listed_by,
    part,
    pending,
    put_if_absent,
    retrying,
)
from zengram.adapters.dynamodb.items import Item, number, string, timestamp
from zengram.adapters.dynamodb.schema import PENDING_PK, PENDING_SK, PK
from zengram.adapters.dynamodb.table import make_client
from zengram.adapters.dynamodb.writes import Expression, WriteOp
from zengram.chat.domain.memories import MemoryStatus, MemoryWrite, SubjectMemory
from zengram.kernel.errors import Conflict, StaleRevision
from zengram.kernel.timestamps import parse_timestamp

PENDING_MARK = "CHAT_PENDING_MEMORY"
ALL_MARK = "SUBJECT_MEMORY"
SEEN_COUNT, LAST_SEEN = "seen_count", "last_seen_at"
HOLDER = "memory_id"


def memory_key(memory_id: str) -> Item:
    return key(f"SMEM#{memory_id}", "SMEM")


def subject_partition(project_id: str, subject_id: str) -> str:
    return f"SUBJECT#{part(project_id)}#{part(subject_id)}"


def guard_key(memory: SubjectMemory) -> Item:
    return key(f"SMEMTEXT#{part(memory.project_id)}#{part(memory.subject_id)}#{memory.text_hash}", "GUARD")


def memory_item(memory: SubjectMemory) -> Item:
    body = memory.model_dump_json(exclude={SEEN_COUNT, LAST_SEEN})
    item: Item = {**memory_key(memory.id), BODY: string(body), REVISION: number(memory.revision),
                  SEEN_COUNT: number(memory.seen_count),
                  **listed_by(subject_partition(memory.project_id, memory.subject_id), memory.created_at, memory.id),
                  **all_of(ALL_MARK, memory.created_at, memory.id),
                  **pending(PENDING_MARK, memory.updated_at, memory.id)}
    if memory.last_seen_at is not None:
        item[LAST_SEEN] = timestamp(memory.last_seen_at)
    return item


def memory_from_item(item: Item) -> SubjectMemory:
    values: dict[str, Any] = {SEEN_COUNT: int(item.get(SEEN_COUNT, {"N": "0"})["N"])}
    if LAST_SEEN in item:
        values[LAST_SEEN] = parse_timestamp(item[LAST_SEEN]["S"])
    return SubjectMemory.model_validate_json(item[BODY]["S"]).model_copy(update=values)


def _revised(memory: SubjectMemory, expected_revision: int) -> WriteOp:
    """The new version of a memory, written only if the stored one is at `expected_revision`. The recall counters
    are left as stored (an UpdateItem that sets everything else)."""
    expression = Expression()
    item = memory_item(memory)
    assignments = [expression.equals(name, value) for name, value in item.items()
                   if name not in (*memory_key(memory.id), SEEN_COUNT, LAST_SEEN)]
    params = expression.params(UpdateExpression=f"SET {', '.join(assignments)}",
                               ConditionExpression=expression.equals(REVISION, number(expected_revision)))
    return WriteOp("Update", {"Key": memory_key(memory.id), **params})


def _take_guard(memory: SubjectMemory) -> WriteOp:
    return put_if_absent({**guard_key(memory), HOLDER: string(memory.id)})


def _release_guard(memory: SubjectMemory) -> WriteOp:
    expression = Expression()
    return WriteOp("Delete", {"Key": guard_key(memory), **expression.params(
        ConditionExpression=expression.equals(HOLDER, string(memory.id)))})


class DynamoDBSubjectMemoryStore:
    def __init__(self, table_name: str, *, region: str | None = None, client: Any | None = None) -> None:
        self._table = ChatTable(client or make_client(region=region), table_name)

    def create(self, memory: SubjectMemory, supersede: Sequence[SubjectMemory]) -> MemoryWrite:
        remaining = list(supersede)

        def attempt() -> MemoryWrite:
            ops = [put_if_absent(memory_item(memory)), _take_guard(memory)]
            for old in remaining:
                ops += [_revised(old, old.revision - 1), _release_guard(old)]
            try:
                self._table.write(ops)
            except WriteConflict as conflict:
                reasons = cancelled_reasons(conflict)
                if len(reasons) > 1 and reasons[1] == "ConditionalCheckFailed":
                    holder = self._guard_holder(memory)
                    if holder is not None:
                        return MemoryWrite(None, duplicate=holder)
                # A memory to supersede moved on meanwhile: it stays as it is.
                stale = {index // 2 - 1 for index, reason in enumerate(reasons)
                         if index >= 2 and reason == "ConditionalCheckFailed"}
                remaining[:] = [old for number_, old in enumerate(remaining) if number_ not in stale]
                raise
            return MemoryWrite(memory, superseded=list(remaining))

        return retrying(attempt, f"store memory {memory.id}")

    def _guard_holder(self, memory: SubjectMemory) -> SubjectMemory | None:
        guard = self._table.get(guard_key(memory))
        if guard is None:
            return None
        holder = self.get(guard[HOLDER]["S"])
        return holder if holder is not None and holder.is_active else None

    def get(self, memory_id: str) -> SubjectMemory | None:
        item = self._table.get(memory_key(memory_id))
        return memory_from_item(item) if item is not None else None

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, SubjectMemory]:
        items = self._table.get_many([memory_key(memory_id) for memory_id in dict.fromkeys(memory_ids)])
        return {memory.id: memory for memory in map(memory_from_item, items)}

    def save(self, memory: SubjectMemory, expected_revision: int) -> SubjectMemory:
        current = self.get(memory.id)
        if current is None or current.revision != expected_revision:
            raise StaleRevision(f"memory {memory.id} changed meanwhile (or does not exist); read it again")
        ops = [_revised(memory, expected_revision)]
        if current.is_active and (not memory.is_active or memory.text_hash != current.text_hash):
            ops.append(_release_guard(current))
        if memory.is_active and (not current.is_active or memory.text_hash != current.text_hash):
            ops.append(_take_guard(memory))
        try:
            self._table.write(ops)
        except WriteConflict as conflict:
            reasons = cancelled_reasons(conflict)
            if reasons and reasons[0] != "ConditionalCheckFailed" and reasons[-1] == "ConditionalCheckFailed":
                raise Conflict(f"memory {memory.id}: another active memory of this subject has the same text") from None
            raise StaleRevision(f"memory {memory.id} changed meanwhile; read it again") from None
        saved = self.get(memory.id)
        assert saved is not None
        return saved

    def of_subject(self, project_id: str, subject_id: str, *, statuses: Sequence[str], include_deleted: bool,
                   limit: int, offset: int) -> list[SubjectMemory]:
        wanted = {MemoryStatus(status) for status in statuses}
        listed = (memory_from_item(item) for item in self._table.by_client(
            subject_partition(project_id, subject_id), newest_first=True))
        matching = (m for m in listed if m.status in wanted and (include_deleted or not m.is_deleted))
        chosen = [m for n, m in enumerate(matching) if n < offset + limit][offset:]
        fresh = self.get_many([m.id for m in chosen])  # the index lags: the table has the current version
        return [fresh[m.id] for m in chosen if m.id in fresh]

    def active_of(self, project_id: str, subject_id: str, limit: int) -> list[SubjectMemory]:
        return self.of_subject(project_id, subject_id, statuses=[MemoryStatus.ACTIVE.value], include_deleted=False,
                               limit=limit, offset=0)

    def record_recall(self, memory_ids: Sequence[str], at: datetime) -> None:
        counts: dict[str, int] = {}
        for memory_id in memory_ids:
            counts[memory_id] = counts.get(memory_id, 0) + 1
        for memory_id, count in counts.items():
            expression = Expression()
            update = (f"ADD {expression.name(SEEN_COUNT)} {expression.value(number(count))} "
                      f"SET {expression.equals(LAST_SEEN, timestamp(at))}")
            try:
                self._table.update(memory_key(memory_id), expression, update,
                                   f"attribute_exists({expression.name(PK)})")
            except WriteConflict:  # an unknown id: nothing to count
                continue

    def pending_index(self, limit: int) -> list[SubjectMemory]:
        return [memory_from_item(item) for item in self._table.fresh(self._table.pending_keys(PENDING_MARK, limit))]

    def mark_indexed(self, revisions: Mapping[str, int]) -> None:
        for memory_id, revision in revisions.items():
            expression = Expression()
            update = f"REMOVE {expression.name(PENDING_PK)}, {expression.name(PENDING_SK)}"
            try:
                self._table.update(memory_key(memory_id), expression, update,
                                   expression.equals(REVISION, number(revision)))
            except WriteConflict:  # changed again since: it stays pending
                continue

    def iter_all(self) -> Iterator[SubjectMemory]:
        for item in self._table.by_created(ALL_MARK):
            fresh = self.get(memory_from_item(item).id)
            if fresh is not None:
                yield fresh

