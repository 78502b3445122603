"""What the stats contract cannot see of the DynamoDB adapter: reads that do not grow with the store, counters that
move only with a committed transaction, and writes spread over the counter shards."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

pytest.importorskip("boto3")
pytest.importorskip("moto")

from zengram.adapters.dynamodb import DynamoDBRecordStore, records
from zengram.adapters.dynamodb.items import STATS_SHARDS
from zengram.memory.domain.models import MemoryType

from tests.aws_support import fresh_dynamodb_store
from tests.contract.test_record_store import T0, make_memory
from tests.unit.test_dynamodb_records import FlakyClient


class RecordingClient:
    """Delegates to a real client and counts the calls made through it, by operation."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)

        def recorded(**params: Any) -> Any:
            self.calls[name] += 1
            return method(**params)

        return recorded


@pytest.fixture
def store() -> Iterator[DynamoDBRecordStore]:
    with fresh_dynamodb_store() as fresh:
        yield fresh


def calls_of_one_stats_read(store: DynamoDBRecordStore) -> Counter[str]:
    recording = RecordingClient(store.client)
    DynamoDBRecordStore(store.table_name, client=recording).stats(T0 + timedelta(days=40), 0.98)
    return recording.calls


def test_reading_stats_costs_the_same_for_5_or_60_memories(store: DynamoDBRecordStore) -> None:
    def add(count: int, start: int) -> None:
        for i in range(start, start + count):
            kind = MemoryType.FACT if i % 2 else MemoryType.EVENT
            store.create_or_corroborate(make_memory(f"note {i}", type=kind, key=f"k{i}"), max_observers=20)

    add(5, 0)
    small = calls_of_one_stats_read(store)
    add(55, 5)
    large = calls_of_one_stats_read(store)

    assert small == large  # one counter Query, one pending count, one decay count per shard: no scan
    assert set(large) == {"query"} and store.stats(T0, 0.98).total == 60


def test_a_transaction_cancelled_by_a_racing_writer_moves_no_counter(
    store: DynamoDBRecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Our transaction reaches DynamoDB and is cancelled there (the key guard moved); only its retry counts."""
    monkeypatch.setattr(records, "_BACKOFF_BASE_SECONDS", 0.0)
    store.create_or_corroborate(make_memory("v1", type=MemoryType.FACT, key="stack"), max_observers=20)

    def competitor_writes_first(number: int) -> None:
        if number == 1:
            store.create_or_corroborate(make_memory("v2", type=MemoryType.FACT, key="stack"), max_observers=20)

    racing = DynamoDBRecordStore(store.table_name, client=FlakyClient(store.client, competitor_writes_first))
    racing.create_or_corroborate(make_memory("v3", type=MemoryType.FACT, key="stack"), max_observers=20)

    stats = store.stats(T0, 0.98)
    assert (stats.total, stats.active, stats.superseded, stats.by_type[MemoryType.FACT]) == (3, 1, 2, 3)


def test_writes_spread_over_the_counter_shards(store: DynamoDBRecordStore, monkeypatch: pytest.MonkeyPatch) -> None:
    shards = iter(range(10))
    monkeypatch.setattr(records.random, "randrange", lambda stop: next(shards) % stop)
    for i in range(10):
        store.create_or_corroborate(make_memory(f"note {i}"), max_observers=20)

    items = store.client.query(TableName=store.table_name, KeyConditionExpression="pk = :stats",
                               ExpressionAttributeValues={":stats": {"S": "STATS"}}, ConsistentRead=True)["Items"]
    assert len(items) == STATS_SHARDS
    assert sum(int(item["total"]["N"]) for item in items) == 10 == store.stats(T0, 0.98).total
