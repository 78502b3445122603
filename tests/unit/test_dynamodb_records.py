"""What the RecordStore contract cannot see of the DynamoDB adapter: guard items, retries, client setup, schema."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("boto3")
pytest.importorskip("moto")

import yaml
from botocore.exceptions import ClientError
from zengram.adapters.dynamodb import TABLE_DEFINITION, DynamoDBRecordStore, records
from zengram.adapters.dynamodb.items import content_guard_key, label_guard_key, memory_key
from zengram.kernel.content import content_hash
from zengram.kernel.errors import Conflict
from zengram.memory.domain.models import Memory, MemoryChanges, MemoryType, WriteKind

from tests.aws_support import dynamodb_client, dynamodb_endpoint, fresh_dynamodb_store, unique_table_name

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
README = Path(__file__).parents[2] / "infra" / "README.md"


def memory(content: str, *, at: datetime = T0, **fields: Any) -> Memory:
    values: dict[str, Any] = {"id": str(uuid.uuid4()), "type": MemoryType.EVENT, "source_agent": "claude-code",
                              "client_id": "acme", "created_at": at, "updated_at": at, "observed_by": ["claude-code"]}
    return Memory(content=content, content_hash=content_hash(content), **{**values, **fields})


def fact(content: str, key: str = "plan", **fields: Any) -> Memory:
    return memory(content, type=MemoryType.FACT, key=key, **fields)


@pytest.fixture
def store() -> Iterator[DynamoDBRecordStore]:
    with fresh_dynamodb_store() as fresh:
        yield fresh


def raw_item(store: DynamoDBRecordStore, memory_id: str) -> dict[str, Any]:
    item: dict[str, Any] = store.client.get_item(TableName=store.table_name, Key=memory_key(memory_id))["Item"]
    return item


def guards(store: DynamoDBRecordStore) -> dict[str, str]:
    """Every guard item in the table: pk -> the memory id it points at."""
    pages = store.client.get_paginator("scan").paginate(TableName=store.table_name, ConsistentRead=True)
    return {item["pk"]["S"]: item["memory_id"]["S"] for page in pages for item in page["Items"]
            if item["kind"]["S"] == "GUARD"}


def expected_guards(store: DynamoDBRecordStore) -> dict[str, str]:
    """The guards the invariant asks for: one content guard per active memory, one label guard per active
    fact with a key or status with a subject."""
    expected = {}
    for stored in store.iter_all(include_deleted=True):
        if stored.active:
            keys = [content_guard_key(stored), label_guard_key(stored)]
            expected.update({key["pk"]["S"]: stored.id for key in keys if key is not None})
    return expected


def assert_guards_consistent(store: DynamoDBRecordStore) -> None:
    assert guards(store) == expected_guards(store)


# -- guards -----------------------------------------------------------------------------------------------


def test_guards_follow_supersede_restore_update_and_delete(store: DynamoDBRecordStore) -> None:
    plan_a, plan_b = fact("plan A"), fact("plan B", at=T0 + timedelta(hours=1))
    store.create_or_corroborate(plan_a, max_observers=20)
    store.create_or_corroborate(plan_b, max_observers=20)
    assert_guards_consistent(store)
    assert set(guards(store).values()) == {plan_b.id}  # plan A gave up both its guards

    store.restore(plan_a.id, T0 + timedelta(hours=2))
    assert_guards_consistent(store)
    assert set(guards(store).values()) == {plan_a.id}

    store.update(plan_a.id, MemoryChanges(content="plan C", content_hash=content_hash("plan C")), T0)
    assert_guards_consistent(store)
    # plan B is superseded, so its content is free: storing it again creates a new memory
    assert store.create_or_corroborate(fact("plan B"), max_observers=20).kind is WriteKind.CREATED
    assert_guards_consistent(store)

    active = [m for m in store.iter_all() if m.active]
    assert len(active) == 1
    store.soft_delete(active[0].id, "n8n", None, T0)
    assert guards(store) == {}


def test_update_to_taken_content_changes_nothing(store: DynamoDBRecordStore) -> None:
    first, second = memory("first note"), memory("second note")
    for each in (first, second):
        store.create_or_corroborate(each, max_observers=20)
    before = guards(store)
    with pytest.raises(Conflict):
        store.update(second.id, MemoryChanges(content="first note", content_hash=content_hash("first note")), T0)
    assert guards(store) == before
    assert store.get(second.id) == second


def test_status_subject_guard_and_escaped_separators(store: DynamoDBRecordStore) -> None:
    # client "a#b" + key "c" and client "a" + key "b#c" must not supersede each other
    left = fact("left", key="c", client_id="a#b")
    right = fact("right", key="b#c", client_id="a")
    green = memory("pipeline green", type=MemoryType.STATUS, subject="pipeline")
    for each in (left, right, green):
        assert store.create_or_corroborate(each, max_observers=20).superseded is None
    assert_guards_consistent(store)
    assert len(guards(store)) == 6


def test_a_guard_left_by_a_vanished_memory_is_taken_over(store: DynamoDBRecordStore) -> None:
    lost = fact("plan A")
    store.create_or_corroborate(lost, max_observers=20)
    store.client.delete_item(TableName=store.table_name, Key=memory_key(lost.id))  # e.g. deleted by hand
    again = fact("plan A")
    outcome = store.create_or_corroborate(again, max_observers=20)
    assert (outcome.kind, outcome.superseded) == (WriteKind.CREATED, None)
    assert set(guards(store).values()) == {again.id}


def test_parallel_corroboration_counts_each_agent_once(store: DynamoDBRecordStore) -> None:
    original = memory("Acme deploys on Fridays")
    store.create_or_corroborate(original, max_observers=20)
    agents = [f"agent-{n % 4}" for n in range(48)]  # each agent races itself
    with ThreadPoolExecutor(max_workers=16) as pool:
        outcomes = list(pool.map(lambda agent: store.create_or_corroborate(
            memory("Acme deploys on Fridays", source_agent=agent), max_observers=20), agents))
    stored = store.get(original.id)
    assert stored is not None
    assert sorted(stored.observed_by) == sorted(["claude-code", *set(agents)])
    assert stored.observation_count == 1 + 4
    assert sum(outcome.kind is WriteKind.CORROBORATED for outcome in outcomes) == 4


# -- items ------------------------------------------------------------------------------------------------


def test_item_layout_and_the_sparse_pending_mark(store: DynamoDBRecordStore) -> None:
    stored = memory("note", metadata={"score": 0.25, "tags": ["x"]})
    store.create_or_corroborate(stored, max_observers=20)
    item = raw_item(store, stored.id)
    assert json.loads(item["metadata"]["S"]) == {"score": 0.25, "tags": ["x"]}
    assert item["created_at"] == {"S": "2026-03-01T12:00:00.000Z"}
    assert item["observed_by"] == {"L": [{"S": "claude-code"}]}
    assert "valid_to" not in item  # None is left out
    assert {"pending_pk", "pending_sk"} <= item.keys()

    store.mark_indexed({stored.id: stored.revision})
    assert not {"pending_pk", "pending_sk"} & raw_item(store, stored.id).keys()
    store.soft_delete(stored.id, "cc", None, T0)
    assert [m.id for m in store.pending_index(10)] == [stored.id]  # deleted memories need indexing too


def test_record_access_never_creates_items(store: DynamoDBRecordStore) -> None:
    store.record_access(["missing", "missing"], T0)
    assert store.count() == 0
    assert store.client.scan(TableName=store.table_name)["Count"] == 0


# -- retries ----------------------------------------------------------------------------------------------


class FlakyClient:
    """Delegates to a real client; `before_transaction` runs before each `transact_write_items`."""

    def __init__(self, client: Any, before_transaction: Any) -> None:
        self._client = client
        self._before_transaction = before_transaction
        self.transactions = 0

    def transact_write_items(self, **params: Any) -> Any:
        self.transactions += 1
        self._before_transaction(self.transactions)
        return self._client.transact_write_items(**params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def cancelled(*codes: str) -> ClientError:
    return ClientError({"Error": {"Code": "TransactionCanceledException", "Message": "cancelled"},
                        "CancellationReasons": [{"Code": code} for code in codes]}, "TransactWriteItems")


def test_a_cancelled_transaction_is_retried(store: DynamoDBRecordStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(records, "_BACKOFF_BASE_SECONDS", 0.0)

    def conflict_once(number: int) -> None:
        if number == 1:
            raise cancelled("None", "TransactionConflict")

    flaky = FlakyClient(store.client, conflict_once)
    retrying = DynamoDBRecordStore(store.table_name, client=flaky)
    first, second = fact("plan A"), fact("plan B")
    retrying.create_or_corroborate(first, max_observers=20)
    assert retrying.create_or_corroborate(second, max_observers=20).superseded is not None
    assert flaky.transactions == 3
    assert_guards_consistent(store)


def test_losing_a_real_race_rereads_and_supersedes_the_winner(
    store: DynamoDBRecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer takes the key guard between our read and our transaction: the transaction is cancelled
    whole, and the retry supersedes the winner, leaving one chain and no half-written memory."""
    monkeypatch.setattr(records, "_BACKOFF_BASE_SECONDS", 0.0)
    original, winner, ours = fact("v1"), fact("v2"), fact("v3")
    store.create_or_corroborate(original, max_observers=20)

    def competitor_writes_first(number: int) -> None:
        if number == 1:
            store.create_or_corroborate(winner, max_observers=20)

    racing = DynamoDBRecordStore(store.table_name, client=FlakyClient(store.client, competitor_writes_first))
    outcome = racing.create_or_corroborate(ours, max_observers=20)
    assert outcome.superseded is not None and outcome.superseded.id == winner.id
    chain = {m.id: m for m in store.iter_all()}
    assert chain[original.id].superseded_by == winner.id
    assert chain[winner.id].superseded_by == ours.id
    assert [m.id for m in chain.values() if m.active] == [ours.id]
    assert_guards_consistent(store)


def test_retries_are_bounded(store: DynamoDBRecordStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(records, "_BACKOFF_BASE_SECONDS", 0.0)
    monkeypatch.setattr(records, "MAX_ATTEMPTS", 3)

    def always_conflict(_: int) -> None:
        raise cancelled("TransactionConflict", "None")

    flaky = FlakyClient(store.client, always_conflict)
    with pytest.raises(Conflict, match="other writers"):
        DynamoDBRecordStore(store.table_name, client=flaky).create_or_corroborate(fact("x"), max_observers=20)
    assert flaky.transactions == 3
    assert store.count() == 0


def test_a_validation_error_is_not_retried(store: DynamoDBRecordStore) -> None:
    def invalid(_: int) -> None:
        raise cancelled("ValidationError", "None")

    flaky = FlakyClient(store.client, invalid)
    with pytest.raises(ClientError):
        DynamoDBRecordStore(store.table_name, client=flaky).create_or_corroborate(fact("x"), max_observers=20)
    assert flaky.transactions == 1


# -- client and table -------------------------------------------------------------------------------------


@pytest.fixture
def clean_endpoint_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_the_client_retries_throttling_adaptively(clean_endpoint_env: pytest.MonkeyPatch) -> None:
    retries = DynamoDBRecordStore("t", region="eu-west-1").client.meta.config.retries
    assert retries["mode"] in {"adaptive", "standard"}
    assert retries["total_max_attempts"] >= 5


def test_endpoint_overrides_are_honoured(clean_endpoint_env: pytest.MonkeyPatch) -> None:
    assert DynamoDBRecordStore("t", region="eu-west-1").client.meta.endpoint_url == (
        "https://dynamodb.eu-west-1.amazonaws.com")
    clean_endpoint_env.setenv("AWS_ENDPOINT_URL", "http://localhost:4566")
    assert DynamoDBRecordStore("t", region="eu-west-1").client.meta.endpoint_url == "http://localhost:4566"
    clean_endpoint_env.setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://localhost:8000")
    assert DynamoDBRecordStore("t", region="eu-west-1").client.meta.endpoint_url == "http://localhost:8000"
    explicit = DynamoDBRecordStore("t", region="eu-west-1", endpoint_url="http://localhost:9")
    assert explicit.client.meta.endpoint_url == "http://localhost:9"


def test_a_store_built_from_the_environment_alone_works(monkeypatch: pytest.MonkeyPatch) -> None:
    """No endpoint, region or credentials passed in: botocore finds them all in the environment."""
    settings = {"AWS_ENDPOINT_URL_DYNAMODB": dynamodb_endpoint(), "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    from_env = DynamoDBRecordStore(unique_table_name())
    from_env.ensure_table()
    try:
        stored = memory("from the environment")
        from_env.create_or_corroborate(stored, max_observers=20)
        assert from_env.get(stored.id) == stored
    finally:
        from_env.client.delete_table(TableName=from_env.table_name)


def test_boto3_is_imported_only_when_a_store_is_built() -> None:
    probe = ("import sys, zengram.adapters.dynamodb; "
             "print(any(name.split('.')[0] in {'boto3', 'botocore'} for name in sys.modules))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_ensure_table_is_idempotent_and_refuses_a_table_that_does_not_fit(store: DynamoDBRecordStore) -> None:
    store.ensure_table()  # already there: no error
    client = dynamodb_client()
    foreign = unique_table_name()
    client.create_table(TableName=foreign, BillingMode="PAY_PER_REQUEST",
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    try:
        with pytest.raises(RuntimeError, match="by-client"):
            DynamoDBRecordStore(foreign, client=client).ensure_table()
    finally:
        client.delete_table(TableName=foreign)


def test_the_cloudformation_snippet_in_infra_readme_is_the_table_definition() -> None:
    section = README.read_text().split("## DynamoDB table design", 1)[1]
    snippet = re.search(r"```yaml\n(  MemoryTable:.*?)```", section, re.DOTALL)
    assert snippet is not None
    properties = yaml.safe_load(snippet.group(1))["MemoryTable"]["Properties"]
    assert {name: properties[name] for name in TABLE_DEFINITION} == TABLE_DEFINITION
