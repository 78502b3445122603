"""The DynamoDB client and the few calls the record store makes, with conditional failures turned into
`WriteConflict`. boto3 is imported only when a client is made, to keep cold starts small."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator, Sequence
from typing import Any

from zengram.adapters.dynamodb.items import Item
from zengram.adapters.dynamodb.schema import error_code
from zengram.adapters.dynamodb.writes import WriteOp

# Throttling and transient errors are retried by botocore itself; adaptive mode also slows the client down
# while DynamoDB throttles it.
RETRIES = {"mode": "adaptive", "max_attempts": 10}
BATCH_GET_LIMIT = 100
_UNPROCESSED_ROUNDS = 8
# A cancellation for one of these reasons is a lost race (or throttling) worth another attempt; any other
# reason, e.g. ValidationError, is a bug and is raised as is.
_RETRYABLE_CANCELLATIONS = frozenset({"None", "ConditionalCheckFailed", "TransactionConflict", "ThrottlingError",
                                      "ProvisionedThroughputExceeded", "RequestLimitExceeded"})


class WriteConflict(Exception):
    """A write's condition failed or its transaction was cancelled: nothing was written; re-read and retry."""


def make_client(*, region: str | None = None, endpoint_url: str | None = None, session: Any | None = None) -> Any:
    """A DynamoDB client. With `endpoint_url` None, botocore honours AWS_ENDPOINT_URL_DYNAMODB and
    AWS_ENDPOINT_URL (LocalStack, DynamoDB Local, moto), as it does AWS_REGION/AWS_DEFAULT_REGION."""
    import boto3  # type: ignore[import-untyped]
    from botocore.config import Config  # type: ignore[import-untyped]

    config = Config(retries=RETRIES, connect_timeout=5, read_timeout=10, max_pool_connections=32)
    # A session per client: boto3's default session is not safe to share between threads.
    return (session or boto3.session.Session()).client(
        "dynamodb", region_name=region, endpoint_url=endpoint_url, config=config)


class DynamoTable:
    """One table through the low-level client. Reads of single items are strongly consistent."""

    def __init__(self, client: Any, name: str) -> None:
        self.client = client
        self.name = name

    def get(self, key: Item) -> Item | None:
        item: Item | None = self.client.get_item(TableName=self.name, Key=key, ConsistentRead=True).get("Item")
        return item

    def get_many(self, keys: Sequence[Item]) -> list[Item]:
        found: list[Item] = []
        for start in range(0, len(keys), BATCH_GET_LIMIT):
            found += self._get_batch(list(keys[start:start + BATCH_GET_LIMIT]))
        return found

    def query(self, params: dict[str, Any], *, page_size: int) -> Iterator[Item]:
        """Every item the query matches, fetched page by page only as far as the caller reads."""
        request = {"TableName": self.name, "Limit": page_size, **params}
        while True:
            page = self.client.query(**request)
            yield from page.get("Items", [])
            if "LastEvaluatedKey" not in page:
                return
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def count(self, params: dict[str, Any]) -> int:
        request = {"TableName": self.name, "Select": "COUNT", **params}
        total = 0
        while True:
            page = self.client.query(**request)
            total += int(page["Count"])
            if "LastEvaluatedKey" not in page:
                return total
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def write(self, ops: Sequence[WriteOp]) -> None:
        """All of `ops` or none of them. Raises WriteConflict when a condition fails."""
        try:
            if len(ops) == 1:
                self._single(ops[0])
            else:
                actions = [{op.action: {"TableName": self.name, **op.params}} for op in ops]
                # botocore fills in ClientRequestToken, so its own retries of this call are idempotent.
                self.client.transact_write_items(TransactItems=actions)
        except Exception as error:
            _raise_conflict_if_lost_race(error)
            raise

    def update_returning(self, op: WriteOp) -> Item:
        """A single conditional update; returns the item as it is afterwards."""
        try:
            response = self.client.update_item(TableName=self.name, ReturnValues="ALL_NEW", **op.params)
        except Exception as error:
            _raise_conflict_if_lost_race(error)
            raise
        attributes: Item = response["Attributes"]
        return attributes

    def _single(self, op: WriteOp) -> None:
        call = {"Put": self.client.put_item, "Update": self.client.update_item, "Delete": self.client.delete_item}
        call[op.action](TableName=self.name, **op.params)

    def _get_batch(self, keys: list[Item]) -> list[Item]:
        found: list[Item] = []
        request: dict[str, Any] = {self.name: {"Keys": keys, "ConsistentRead": True}}
        for round_number in range(_UNPROCESSED_ROUNDS):
            response = self.client.batch_get_item(RequestItems=request)
            found += response.get("Responses", {}).get(self.name, [])
            request = response.get("UnprocessedKeys") or {}
            if not request:
                return found
            time.sleep(random.uniform(0, 0.05 * 2 ** round_number))  # DynamoDB asks us to back off
        raise RuntimeError(f"DynamoDB left {len(request[self.name]['Keys'])} keys unprocessed; try again later")


def _raise_conflict_if_lost_race(error: Exception) -> None:
    code = error_code(error)
    if code == "ConditionalCheckFailedException":
        raise WriteConflict(str(error)) from error
    if code == "TransactionCanceledException":
        cancellations = getattr(error, "response", {}).get("CancellationReasons", [])
        reasons = {reason.get("Code", "None") for reason in cancellations}
        if reasons <= _RETRYABLE_CANCELLATIONS:
            raise WriteConflict(str(error)) from error
