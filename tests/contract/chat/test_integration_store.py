"""The `IntegrationStore` contract (zengram/chat/ports.py), for every adapter: SQLite (the records file) and DynamoDB
(one table, on moto). Its own fixture, built the way `STORES_BY_FAMILY` builds it."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from zengram.chat.domain.integrations import Integration, IntegrationCreate
from zengram.chat.domain.webhooks import Attempt, Delivery
from zengram.chat.ports import IntegrationStore

from tests.contract.chat.helpers import at


@pytest.fixture(params=["sqlite", "dynamodb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[IntegrationStore]:
    if request.param == "sqlite":
        from zengram.adapters.sqlite.chat_integrations import SQLiteIntegrationStore

        built = SQLiteIntegrationStore(tmp_path / "records.sqlite3")
        yield built
        built.close()
        return
    if not all(importlib.util.find_spec(name) for name in ("boto3", "moto")):
        pytest.skip("boto3 and moto[server] are needed: pip install -e '.[dev]'")
    from zengram.adapters.dynamodb.chat_integrations import DynamoDBIntegrationStore

    from tests.aws_support import fresh_dynamodb_store

    with fresh_dynamodb_store() as table:
        yield DynamoDBIntegrationStore(table.table_name, client=table.client)


def integration(integration_id: str, seconds: float, project: str = "acme") -> Integration:
    return Integration.new(integration_id, project, IntegrationCreate(
        name=integration_id, mode="webhook", webhook_secret="whsec", headers_template={"Authorization": "x"}),
        at(seconds))


def delivery(delivery_id: str, seconds: float, integration_id: str = "hook") -> Delivery:
    return Delivery(delivery_id=delivery_id, project_id="acme", integration_id=integration_id, event_id="e",
                    event="ping", url="https://x.example/", status="failed",
                    attempts=[Attempt(attempt=1, at=at(seconds), status_code=None, error="timed out",
                                      duration_ms=5)], created_at=at(seconds), finished_at=at(seconds + 1))


def test_integrations_are_kept_per_project_secrets_included(store: IntegrationStore) -> None:
    second = store.put(integration("b", 1))
    first = store.put(integration("a", 0))
    store.put(integration("a", 2, project="globex"))
    assert store.get("acme", "a") == first and store.get("acme", "a").webhook_secret == "whsec"  # type: ignore[union-attr]
    assert store.get("other", "a") is None
    assert store.of_project("acme") == [first, second]  # oldest first
    synced = store.put(first.synced(at(5)))
    assert store.get("acme", "a") == synced
    assert store.delete("acme", "a") is True and store.delete("acme", "a") is False
    assert store.of_project("acme") == [second] and store.get("globex", "a") is not None


def test_deliveries_are_listed_newest_first_per_integration(store: IntegrationStore) -> None:
    for number in range(3):
        store.add_delivery(delivery(f"dlv_{number}", number))
    store.add_delivery(delivery("dlv_other", 9, integration_id="other"))
    assert [d.delivery_id for d in store.deliveries("acme", "hook", 10)] == ["dlv_2", "dlv_1", "dlv_0"]
    assert [d.delivery_id for d in store.deliveries("acme", "hook", 2)] == ["dlv_2", "dlv_1"]
    assert store.deliveries("acme", "hook", 1)[0] == delivery("dlv_2", 2)
    assert store.deliveries("globex", "hook", 10) == []


def test_an_event_id_is_first_seen_exactly_once(store: IntegrationStore) -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:
        outcomes = list(pool.map(lambda _: store.first_seen("acme", "hook", "evt-1", at(0)), range(8)))
    assert outcomes.count(True) == 1
    assert store.first_seen("acme", "other", "evt-1", at(0)) is True  # per integration
    assert store.first_seen("globex", "hook", "evt-1", at(0)) is True  # per project


def test_due_lists_the_scheduled_integrations_of_every_project_earliest_first(store: IntegrationStore) -> None:
    def scheduled(integration_id: str, seconds: float, project: str = "acme", every: int = 60) -> Integration:
        return Integration.new(integration_id, project, IntegrationCreate(
            name=integration_id, mode="pull", endpoint_url="https://x.example/", schedule_seconds=every), at(seconds))

    store.put(integration("hook", 0))  # no schedule: never due
    late = store.put(scheduled("late", 5, project="globex"))
    early = store.put(scheduled("early", 1))
    assert store.due(at(0), 10) == []
    assert store.due(at(10), 10) == [early, late]
    assert store.due(at(10), 1) == [early]
    synced = store.put(early.synced(at(10)))  # next due a period later
    assert store.due(at(20), 10) == [late]
    assert store.due(at(70), 10) == [late, synced]
    store.put(late.model_copy(update={"is_active": False}))
    assert store.due(at(70), 10) == [synced]
    store.delete("acme", "early")
    assert store.due(at(70), 10) == []
