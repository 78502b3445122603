"""The AWS `MemoryEventLog` and `AuditLog` (chat/ports.py), items in the records table.

Events: a subject's log is the partition `MEMEVT#<project>#<subject>`, sort key the zero-padded `seq`; its counter
is the item (`MEMEVTSEQ#<project>#<subject>`, `seq`). An append reads the counter (strongly consistent) and writes
the counter and the events in one transaction conditioned on the counter as read, retried when another writer got
there first: numbering is gap-free, and an event is visible only with every event before it.
Audit: a project's rows are the partition `AUDIT#<project>`, sort key the row id (ids sort by time).
Retention: both carry `ttl` (epoch seconds) for the table's TimeToLiveSpecification; `prune` removes nothing itself.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import partial
from itertools import groupby, islice
from typing import Any

from zengram.adapters.dynamodb.chat_items import BODY, PAGE, ChatTable, key, part, retrying
from zengram.adapters.dynamodb.items import Item, number, string, timestamp
from zengram.adapters.dynamodb.schema import PK, SK
from zengram.adapters.dynamodb.table import make_client
from zengram.adapters.dynamodb.writes import Expression, WriteOp
from zengram.chat.domain.events import (
    AUDIT_RETENTION,
    EVENT_RETENTION,
    AuditEntry,
    MemoryEvent,
    MemoryEventType,
    NewMemoryEvent,
)
from zengram.kernel.timestamps import parse_timestamp

TTL_ATTRIBUTE = "ttl"
LAST_SEQ = "last_seq"
_PER_TRANSACTION = 99  # DynamoDB's limit is 100 actions; one is the counter


def events_partition(project_id: str, subject_id: str) -> str:
    return f"MEMEVT#{part(project_id)}#{part(subject_id)}"


def _counter_key(project_id: str, subject_id: str) -> Item:
    return key(f"MEMEVTSEQ#{part(project_id)}#{part(subject_id)}", "seq")


def _seq_key(seq: int) -> str:
    return f"{seq:016d}"


def _expiry(moment: datetime, keep: timedelta) -> dict[str, Any]:
    return number(int((moment + keep).timestamp()) + 1)


def _event(item: Item) -> MemoryEvent:
    return MemoryEvent(project_id=item["project_id"]["S"], subject_id=item["subject_id"]["S"],
                       seq=int(item[SK]["S"]), type=MemoryEventType(item["type"]["S"]),
                       data=json.loads(item["data"]["S"]), created_at=parse_timestamp(item["created_at"]["S"]))


class DynamoDBMemoryEventLog:
    def __init__(self, table_name: str, *, region: str | None = None, client: Any | None = None) -> None:
        self._table = ChatTable(client or make_client(region=region), table_name)

    def append(self, events: Sequence[NewMemoryEvent]) -> list[MemoryEvent]:
        numbered: list[MemoryEvent] = []
        for (project_id, subject_id), run in groupby(events, key=lambda e: (e.project_id, e.subject_id)):
            theirs = list(run)
            for start in range(0, len(theirs), _PER_TRANSACTION):
                batch = theirs[start:start + _PER_TRANSACTION]
                numbered += retrying(partial(self._append, project_id, subject_id, batch), "recording memory events")
        return numbered

    def _append(self, project_id: str, subject_id: str, events: list[NewMemoryEvent]) -> list[MemoryEvent]:
        counter = self._table.get(_counter_key(project_id, subject_id))
        last = int(counter[LAST_SEQ]["N"]) if counter is not None else 0
        numbered = [MemoryEvent(**event.model_dump(), seq=last + n) for n, event in enumerate(events, start=1)]
        expression = Expression()
        condition = (f"attribute_not_exists({PK})" if counter is None
                     else expression.equals(LAST_SEQ, number(last)))
        update = f"SET {expression.equals(LAST_SEQ, number(last + len(events)))}"
        ops = [WriteOp("Update", {"Key": _counter_key(project_id, subject_id), **expression.params(
            UpdateExpression=update, ConditionExpression=condition)})]
        ops += [WriteOp("Put", {"Item": {
            **key(events_partition(project_id, subject_id), _seq_key(event.seq)),
            "project_id": string(project_id), "subject_id": string(subject_id), "type": string(event.type.value),
            "data": string(json.dumps(event.data, ensure_ascii=False)), "created_at": timestamp(event.created_at),
            TTL_ATTRIBUTE: _expiry(event.created_at, EVENT_RETENTION)}}) for event in numbered]
        self._table.write(ops)
        return numbered

    def last(self, project_id: str, subject_id: str) -> int:
        counter = self._table.get(_counter_key(project_id, subject_id))
        return int(counter[LAST_SEQ]["N"]) if counter is not None else 0

    def since(self, project_id: str, subject_id: str, after: int, limit: int) -> list[MemoryEvent]:
        expression = Expression()
        condition = (f"{expression.equals(PK, string(events_partition(project_id, subject_id)))} AND "
                     f"{expression.name(SK)} > {expression.value(string(_seq_key(after)))}")
        params = expression.params(KeyConditionExpression=condition)
        params.update(ConsistentRead=True, ScanIndexForward=True)
        items = islice(self._table.query(params, page_size=min(limit, PAGE)), limit)
        return [_event(item) for item in items]

    def prune(self, before: datetime) -> int:
        return 0  # the table's TTL removes events once their `ttl` has passed


class DynamoDBAuditLog:
    def __init__(self, table_name: str, *, region: str | None = None, client: Any | None = None) -> None:
        self._table = ChatTable(client or make_client(region=region), table_name)

    def record(self, entry: AuditEntry) -> None:
        item = {**key(f"AUDIT#{part(entry.project_id)}", entry.id), BODY: string(entry.model_dump_json()),
                TTL_ATTRIBUTE: _expiry(entry.created_at, AUDIT_RETENTION)}
        for name, value in (("subject_id", entry.subject_id), ("session_id", entry.session_id)):
            if value is not None:
                item[name] = string(value)
        self._table.write([WriteOp("Put", {"Item": item})])

    def recent(self, project_id: str, limit: int, *, before: str | None = None, subject_id: str | None = None,
               session_id: str | None = None) -> list[AuditEntry]:
        expression = Expression()
        condition = expression.equals(PK, string(f"AUDIT#{part(project_id)}"))
        if before is not None:
            condition += f" AND {expression.name(SK)} < {expression.value(string(before))}"
        filters = [expression.equals(name, string(value))
                   for name, value in (("subject_id", subject_id), ("session_id", session_id)) if value is not None]
        params = expression.params(KeyConditionExpression=condition,
                                   **({"FilterExpression": " AND ".join(filters)} if filters else {}))
        params.update(ConsistentRead=True, ScanIndexForward=False)
        items = islice(self._table.query(params, page_size=PAGE), limit)
        return [AuditEntry.model_validate_json(item[BODY]["S"]) for item in items]

    def prune(self, before: datetime) -> int:
        return 0  # the table's TTL removes rows once their `ttl` has passed
