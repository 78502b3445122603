"""The admin function on DynamoDB (moto): its sample events mint, list and revoke scoped keys, which the other
functions then honour; only an admin key may call it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from zengram.adapters.dynamodb.keys import key_item_key
from zengram.assembly.provider import ContainerProvider

from tests.functions.conftest import SAMPLE_KEY, fresh_container_for
from tests.functions.invoke import invoke, load_event


@pytest.fixture
def provider(lambda_environment: str) -> Iterator[ContainerProvider]:
    admin, memory = fresh_container_for("admin"), fresh_container_for("memory")
    yield admin
    admin.close()
    memory.close()


def call(group: str, relative: str, *, key: str = SAMPLE_KEY, key_id: str | None = None,
         **overrides: Any) -> tuple[int, dict[str, Any]]:
    event = load_event(relative, **overrides)
    event["headers"]["x-api-key"] = key
    if key_id is not None:
        event["rawPath"] = event["rawPath"].replace("SAMPLE-ID", key_id)
        event["requestContext"]["http"]["path"] = event["rawPath"]
        event["pathParameters"] = {"key_id": key_id}
    response = invoke(group, event)
    return response["statusCode"], json.loads(response["body"])


def test_admin_events_create_list_and_revoke_a_key(provider: ContainerProvider, lambda_environment: str) -> None:
    status, created = call("admin", "admin/post_key.json")
    assert status == 201, created
    assert created["role"] == "write" and created["clients"] == ["acme-corp"] and created["revoked_at"] is None
    key = created.pop("key")
    assert key.startswith(f"zgk_{created['id']}_")
    item = provider.get().records.client.get_item(TableName=lambda_environment, Key=key_item_key(created["id"]))["Item"]
    assert item["kind"] == {"S": "APIKEY"} and item["secret_hash"]["S"].startswith("hmac-sha256$")
    assert key not in json.dumps(item) and key.split("_", 2)[2] not in json.dumps(item)

    status, listed = call("admin", "admin/list_keys.json")
    assert status == 200 and listed == {"count": 1, "keys": [created]}  # the key itself is never listed

    assert call("memory", "memory/post_memory.json", key=key)[0] == 201  # another function honours it
    assert call("admin", "admin/list_keys.json", key=key)[0] == 403  # a write key manages no keys

    status, revoked = call("admin", "admin/delete_key.json", key_id=created["id"])
    assert status == 200 and revoked["revoked"] is True and revoked["id"] == created["id"]
    assert call("memory", "memory/post_memory.json", key=key) == (401, {"error": "invalid API key"})
    assert call("admin", "admin/delete_key.json", key_id=created["id"]) == (200, revoked)  # again: the same
    assert call("admin", "admin/delete_key.json", key_id="0" * 32)[0] == 404


def test_an_invalid_key_request_is_a_400_naming_the_field(provider: ContainerProvider) -> None:
    status, body = call("admin", "admin/post_key_invalid.json")
    assert status == 400 and body["error"].startswith("role:")
    assert call("admin", "admin/list_keys.json")[1] == {"count": 0, "keys": []}
