"""The AWS `RateLimiter`: one item per (key, bucket, window) in the records table, counted with an atomic
`ADD`, so every Lambda instance shares the count. Items carry `expires_at` for the table's TTL."""

from __future__ import annotations

import contextlib
import math
from typing import Any

from zengram.adapters.dynamodb.items import Item, number, string
from zengram.adapters.dynamodb.schema import PK, SK
from zengram.adapters.dynamodb.table import make_client
from zengram.kernel.ports import Clock

RATE_KIND = "RATE"
TTL_ATTRIBUTE = "ttl"  # epoch seconds; template.yaml enables the table's TTL on it


def _escape(part: str) -> str:
    return part.replace("%", "%25").replace("#", "%23")


def rate_key(key: str, bucket: str, window_start: int) -> Item:
    return {PK: string(f"{RATE_KIND}#{_escape(key)}#{_escape(bucket)}#{window_start}"), SK: string(RATE_KIND)}


class DynamoDBRateLimiter:
    """Stateless apart from the table; thread-safe like the boto3 client."""

    def __init__(self, table_name: str, clock: Clock, *, region: str | None = None, client: Any | None = None) -> None:
        self._client = client or make_client(region=region)
        self._table_name = table_name
        self._clock = clock

    def hit(self, key: str, bucket: str, limit: int, window_seconds: int) -> int | None:
        now = self._clock.now().timestamp()
        window_start = int(now // window_seconds) * window_seconds
        window_end = window_start + window_seconds
        response = self._client.update_item(
            TableName=self._table_name,
            Key=rate_key(key, bucket, window_start),
            # ADD is applied atomically by DynamoDB: concurrent hits each see their own count.
            UpdateExpression="SET #kind = :kind, #expires = :expires ADD #hits :one",
            ExpressionAttributeNames={"#kind": "kind", "#expires": TTL_ATTRIBUTE, "#hits": "hits"},
            ExpressionAttributeValues={":kind": string(RATE_KIND), ":expires": number(window_end + window_seconds),
                                       ":one": number(1)},
            ReturnValues="UPDATED_NEW",
        )
        if int(response["Attributes"]["hits"]["N"]) <= limit:
            return None
        return max(1, math.ceil(window_end - now))

    def refund(self, key: str, bucket: str, window_seconds: int) -> None:
        window_start = int(self._clock.now().timestamp() // window_seconds) * window_seconds
        # Nothing to give back when nothing counted in this window (it rolled over, or is back at 0).
        with contextlib.suppress(self._client.exceptions.ConditionalCheckFailedException):
            self._client.update_item(
                TableName=self._table_name,
                Key=rate_key(key, bucket, window_start),
                UpdateExpression="ADD #hits :minus_one",
                ConditionExpression="#hits > :zero",  # also false when the window's item does not exist
                ExpressionAttributeNames={"#hits": "hits"},
                ExpressionAttributeValues={":minus_one": number(-1), ":zero": number(0)},
            )
