"""How the chat layer's stores lay their items out in the records table (docs/chat.md, "Storage").

Every value object is kept whole as a JSON `body`; key attributes and the few attributes conditions and indexes
need sit beside it. The table's existing GSIs are shared by partition value, never by meaning: `by-client` lists a
subject's memories (`SUBJECT#…`), a type's records (`RECORDS#…`), a chat's recall events (`RECALLCHAT#…`) and a
project's learning jobs (`LJOBS#…`); `by-created` iterates all subject memories and records and a project's recall
events; `pending-index` holds the chat layer's index outbox (`CHAT_PENDING_*`) and due learning jobs (`CHAT_LEARN`).
None of these partitions is one Zengram reads. Id parts are percent-encoded, so a `#` in an id is never a separator.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import quote

from zengram.adapters.dynamodb.items import Item, number, string, timestamp
from zengram.adapters.dynamodb.schema import (
    ALL_PK,
    BY_CLIENT,
    BY_CREATED,
    CLIENT_PK,
    CREATED_SK,
    PENDING_INDEX,
    PENDING_PK,
    PENDING_SK,
    PK,
    SK,
    error_code,
)
from zengram.adapters.dynamodb.table import DynamoTable, WriteConflict
from zengram.adapters.dynamodb.writes import Expression, WriteOp
from zengram.kernel.errors import Conflict
from zengram.kernel.timestamps import format_timestamp

__all__ = ["WriteConflict"]  # the chat stores take it from here, with the rest
T = TypeVar("T")
BODY = "body"
REVISION = "revision"
PAGE = 200
_BATCH_WRITE_LIMIT = 25
_ATTEMPTS = 12


def part(text: str) -> str:
    """An id inside a key: percent-encoded, so it holds no `#`."""
    return quote(text, safe="")


def key(pk: str, sk: str) -> Item:
    return {PK: string(pk), SK: string(sk)}


def position(moment: datetime, item_id: str) -> str:
    """A sort key that orders by time, then id."""
    return f"{format_timestamp(moment)}#{item_id}"


def listed_by(partition: str, moment: datetime, item_id: str) -> Item:
    """The attributes that put an item into a `by-client` partition, ordered by time."""
    return {CLIENT_PK: string(partition), CREATED_SK: string(position(moment, item_id))}


def all_of(partition: str, moment: datetime, item_id: str) -> Item:
    """The attributes that put an item into a `by-created` partition, ordered by time."""
    return {ALL_PK: string(partition), CREATED_SK: string(position(moment, item_id))}


def pending(partition: str, moment: datetime, item_id: str) -> Item:
    return {PENDING_PK: string(partition), PENDING_SK: string(position(moment, item_id))}


class ChatTable(DynamoTable):
    """The records table, with the few reads and writes the chat stores share."""

    def partition(self, pk: str, *, newest_first: bool = False, limit: int | None = None) -> Iterator[Item]:
        """The items of one partition of the table itself (strongly consistent), by sort key."""
        expression = Expression()
        params = expression.params(KeyConditionExpression=expression.equals(PK, string(pk)))
        params.update(ConsistentRead=True, ScanIndexForward=not newest_first)
        items = self.query(params, page_size=min(limit or PAGE, PAGE))
        return _take(items, limit)

    def indexed(self, index: str, attribute: str, value: str, *, newest_first: bool = False,
                until: str | None = None) -> Iterator[Item]:
        """The items of one partition of a GSI (eventually consistent), by sort key; `until` caps the sort key."""
        expression = Expression()
        condition = expression.equals(attribute, string(value))
        if until is not None:
            sort_key = PENDING_SK if index == PENDING_INDEX else CREATED_SK
            condition += f" AND {expression.name(sort_key)} <= {expression.value(string(until))}"
        params = expression.params(KeyConditionExpression=condition)
        params.update(IndexName=index, ScanIndexForward=not newest_first)
        return self.query(params, page_size=PAGE)

    def by_client(self, value: str, *, newest_first: bool = False) -> Iterator[Item]:
        return self.indexed(BY_CLIENT, CLIENT_PK, value, newest_first=newest_first)

    def by_created(self, value: str, *, newest_first: bool = False) -> Iterator[Item]:
        return self.indexed(BY_CREATED, ALL_PK, value, newest_first=newest_first)

    def pending_keys(self, mark: str, limit: int, until: str | None = None) -> list[Item]:
        return [{PK: item[PK], SK: item[SK]}
                for item in _take(self.indexed(PENDING_INDEX, PENDING_PK, mark, until=until), limit)]

    def fresh(self, items: Iterator[Item] | list[Item], limit: int | None = None) -> list[Item]:
        """Items read from a GSI, read again from the table (strongly consistent), in the same order; items deleted
        meanwhile are left out."""
        keys = [{PK: item[PK], SK: item[SK]} for item in _take(iter(items), limit)]
        found = {(item[PK]["S"], item[SK]["S"]): item for item in self.get_many(keys)}
        return [found[(k[PK]["S"], k[SK]["S"])] for k in keys if (k[PK]["S"], k[SK]["S"]) in found]

    def put_all(self, items: Sequence[Item]) -> None:
        self._batch([{"PutRequest": {"Item": item}} for item in items])

    def delete_all(self, keys: Sequence[Item]) -> None:
        self._batch([{"DeleteRequest": {"Key": k}} for k in keys])

    def update(self, item_key: Item, expression: Expression, update: str, condition: str | None = None,
               *, returning: bool = False) -> Item | None:
        """One UpdateItem; raises WriteConflict when `condition` fails."""
        params = expression.params(UpdateExpression=update, **({"ConditionExpression": condition} if condition else {}))
        op = WriteOp("Update", {"Key": item_key, **params})
        if returning:
            return self.update_returning(op)
        self.write([op])
        return None

    def delete_returning(self, item_key: Item) -> Item | None:
        response = self.client.delete_item(TableName=self.name, Key=item_key, ReturnValues="ALL_OLD")
        old: Item | None = response.get("Attributes")
        return old

    def _batch(self, requests: list[dict[str, Any]]) -> None:
        for start in range(0, len(requests), _BATCH_WRITE_LIMIT):
            pending_requests = {self.name: requests[start:start + _BATCH_WRITE_LIMIT]}
            for round_number in range(_ATTEMPTS):
                response = self.client.batch_write_item(RequestItems=pending_requests)
                pending_requests = response.get("UnprocessedItems") or {}
                if not pending_requests:
                    break
                time.sleep(random.uniform(0, 0.05 * 2 ** round_number))
            else:
                raise RuntimeError("DynamoDB left writes unprocessed; try again later")


def put_if_absent(item: Item) -> WriteOp:
    return WriteOp("Put", {"Item": item, "ConditionExpression": f"attribute_not_exists({PK})"})


def replace_at_revision(item: Item, revision: int) -> WriteOp:
    """Replaces an item only if it is still at `revision`."""
    expression = Expression()
    return WriteOp("Put", {"Item": item, **expression.params(
        ConditionExpression=expression.equals(REVISION, number(revision)))})


def cancelled_reasons(error: WriteConflict) -> list[str]:
    """Per action of a cancelled transaction, why (`None` for actions that were fine)."""
    cause = error.__cause__
    reasons = getattr(cause, "response", {}).get("CancellationReasons", []) if cause is not None else []
    return [str(reason.get("Code", "None")) for reason in reasons]


def retrying(attempt: Callable[[], T], action: str) -> T:
    """Runs `attempt` until no concurrent writer interferes (jittered backoff)."""
    for round_number in range(_ATTEMPTS):
        try:
            return attempt()
        except WriteConflict:
            time.sleep(random.uniform(0, min(0.5, 0.01 * 2 ** round_number)))
    raise Conflict(f"{action}: other writers kept changing the same items; try again")


def is_conditional_failure(error: BaseException) -> bool:
    return error_code(error) == "ConditionalCheckFailedException"


def stamp(moment: datetime | None) -> Mapping[str, Any]:
    return timestamp(moment) if moment is not None else {"NULL": True}


def _take(items: Iterator[Item], limit: int | None) -> Iterator[Item]:
    for count, item in enumerate(items):
        if limit is not None and count >= limit:
            return
        yield item
