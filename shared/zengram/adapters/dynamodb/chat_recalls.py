"""The AWS `RecallEventStore` (chat_ports.py): one item per event (`RECALL#<id>`), listed per chat through
`by-client` (`RECALLCHAT#<project>#<chat>`) and per project through `by-created` (`RECALLS#<project>`), plus one
item per injected memory in the memory's partition (`RECALLMEM#<project>#<memory>`), written in the same
transaction. The learning outcome is an attribute of its own, replaced as the job moves on."""

from __future__ import annotations

import contextlib
from typing import Any

from zengram.adapters.dynamodb.chat_items import BODY, ChatTable, WriteConflict, all_of, key, listed_by, part, position
from zengram.adapters.dynamodb.items import Item, string
from zengram.adapters.dynamodb.schema import PK
from zengram.adapters.dynamodb.table import make_client
from zengram.adapters.dynamodb.writes import Expression, WriteOp
from zengram.chat.domain.recalls import LearningOutcome, RecallEvent

LEARNING = "learning"
EVENT_ID = "event_id"
_TRANSACTION_LIMIT = 100


def event_key(event_id: str) -> Item:
    return key(f"RECALL#{event_id}", "EVENT")


def _event(item: Item) -> RecallEvent:
    event = RecallEvent.model_validate_json(item[BODY]["S"])
    if LEARNING in item:
        event = event.model_copy(update={"learning": LearningOutcome.model_validate_json(item[LEARNING]["S"])})
    return event


class DynamoDBRecallEventStore:
    def __init__(self, table_name: str, *, region: str | None = None, client: Any | None = None) -> None:
        self._table = ChatTable(client or make_client(region=region), table_name)

    def record(self, event: RecallEvent) -> None:
        item: Item = {**event_key(event.id), BODY: string(event.model_dump_json(exclude={LEARNING})),
                      **listed_by(f"RECALLCHAT#{part(event.project_id)}#{part(event.chat_id)}", event.created_at,
                                  event.id),
                      **all_of(f"RECALLS#{part(event.project_id)}", event.created_at, event.id)}
        if event.learning is not None:
            item[LEARNING] = string(event.learning.model_dump_json())
        rows = [{**key(f"RECALLMEM#{part(event.project_id)}#{part(use.memory_id)}",
                       position(event.created_at, event.id)), EVENT_ID: string(event.id)}
                for use in {use.memory_id: use for use in event.memories}.values()]
        ops = [WriteOp("Put", {"Item": each}) for each in [item, *rows]]
        for start in range(0, len(ops), _TRANSACTION_LIMIT):  # one transaction unless over 99 memories
            self._table.write(ops[start:start + _TRANSACTION_LIMIT])

    def get(self, event_id: str) -> RecallEvent | None:
        item = self._table.get(event_key(event_id))
        return _event(item) if item is not None else None

    def for_chat(self, project_id: str, chat_id: str, limit: int) -> list[RecallEvent]:
        items = self._table.by_client(f"RECALLCHAT#{part(project_id)}#{part(chat_id)}")
        return [_event(item) for item in self._table.fresh(items, limit)]

    def latest(self, project_id: str, limit: int) -> list[RecallEvent]:
        items = self._table.by_created(f"RECALLS#{part(project_id)}", newest_first=True)
        return [_event(item) for item in self._table.fresh(items, limit)]

    def for_memory(self, project_id: str, memory_id: str, limit: int) -> list[RecallEvent]:
        rows = self._table.partition(f"RECALLMEM#{part(project_id)}#{part(memory_id)}", newest_first=True,
                                     limit=limit)
        keys = [event_key(row[EVENT_ID]["S"]) for row in rows]
        return [_event(item) for item in self._table.fresh(keys)]

    def set_learning(self, event_id: str, outcome: LearningOutcome) -> None:
        expression = Expression()
        with contextlib.suppress(WriteConflict):  # an unknown event: nothing to report into
            self._table.update(event_key(event_id), expression,
                               f"SET {expression.equals(LEARNING, string(outcome.model_dump_json()))}",
                               f"attribute_exists({expression.name(PK)})")
