"""The clients function on DynamoDB (moto): its sample events, client_id resolution by the memory function from
fingerprints the clients function wrote, and rate limits shared by two functions through the table."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from zengram.adapters.dynamodb.clients import client_key
from zengram.assembly.containers import build_container
from zengram.assembly.provider import ContainerProvider
from zengram.settings import Settings

from tests.functions.conftest import fresh_container_for
from tests.functions.invoke import invoke, load_event, load_function_module
from tests.support import ManualClock


@pytest.fixture
def provider(lambda_environment: str) -> Iterator[ContainerProvider]:
    fresh = fresh_container_for("clients")
    yield fresh
    fresh.close()


def call(group: str, relative: str, **overrides: Any) -> tuple[int, dict[str, Any], dict[str, str]]:
    response = invoke(group, load_event(relative, **overrides))
    return response["statusCode"], json.loads(response["body"]), response["headers"]


def test_client_events_put_get_list_and_delete(provider: ContainerProvider, lambda_environment: str) -> None:
    status, created, headers = call("clients", "clients/put_client.json")
    assert status == 201, created
    assert created["client_id"] == "acme-corp" and created["aliases"] == ["Acme", "Acme Corp"]
    assert created["revision"] == 1 and headers["x-request-id"] == "sample-client-put-1"
    item = provider.get().records.client.get_item(TableName=lambda_environment, Key=client_key("acme-corp"))
    assert item["Item"]["kind"] == {"S": "CLIENT"}  # a record in the table, not in the function's /tmp

    status, replaced, _ = call("clients", "clients/put_client.json")
    assert status == 200 and replaced["revision"] == 2 and replaced["created_at"] == created["created_at"]
    status, fetched, _ = call("clients", "clients/get_client.json")
    assert status == 200 and fetched == replaced
    status, listed, _ = call("clients", "clients/list_clients.json")
    assert status == 200 and listed == {"count": 1, "clients": [replaced]}

    status, deleted, _ = call("clients", "clients/delete_client.json")
    assert status == 200 and deleted == {"client_id": "acme-corp", "deleted": True}
    assert call("clients", "clients/get_client.json")[0] == 404
    assert call("clients", "clients/delete_client.json")[0] == 404


def test_invalid_put_is_400_and_writes_nothing(provider: ContainerProvider) -> None:
    status, body, _ = call("clients", "clients/put_client_invalid.json")
    assert status == 400 and body["error"].startswith("aliases:")
    assert provider.get().clients.list_all() == []


def test_memory_function_resolves_clients_the_clients_function_stored(provider: ContainerProvider) -> None:
    memory = fresh_container_for("memory")
    try:
        assert call("clients", "clients/put_client.json")[0] == 201
        event = load_event("memory/post_memory.json")
        event["body"] = json.dumps({"type": "event", "content": "Kickoff call with Jane Doe about anvils",
                                    "source_agent": "n8n"})
        response = invoke("memory", event)
        assert response["statusCode"] == 201, response["body"]
        stored = memory.get().records.get(json.loads(response["body"])["id"])
        assert stored is not None and stored.client_id == "acme-corp"
    finally:
        memory.close()


def test_rate_limits_are_shared_by_every_function(lambda_environment: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two functions (two containers, as two Lambda instances would have) count into the same table."""
    monkeypatch.setenv("ZENGRAM_RATE_LIMIT_ENABLED", "true")
    monkeypatch.setenv("ZENGRAM_RATE_LIMIT_READS_PER_MINUTE", "2")
    clock = ManualClock()  # both instances read the same time; a real minute boundary could split the count
    providers = []
    for group in ("clients", "memory"):
        provider = ContainerProvider(lambda: build_container(Settings(), clock=clock))
        load_function_module(group).app.state.provider = provider
        providers.append(provider)
    try:
        assert call("clients", "clients/list_clients.json")[0] == 200
        assert call("clients", "clients/get_client.json")[0] == 404
        clock.advance(seconds=10)
        status, body, headers = call("memory", "memory/get_query.json")
        assert status == 429 and body["error"].startswith("rate limit:")
        assert headers["retry-after"] == "50"
        assert call("clients", "clients/put_client.json")[0] == 201  # writes have their own budget
        clock.advance(seconds=50)
        assert call("memory", "memory/get_query.json")[0] == 200
    finally:
        for provider in providers:
            provider.close()
