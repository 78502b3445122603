"""The memory function answers every sample event: records land in DynamoDB, search finds them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from zengram.assembly.provider import ContainerProvider
from zengram.kernel.keys import KeyDraft, Role
from zengram.memory.domain.models import MemoryType
from zengram.memory.domain.requests import MemoryDraft
from zengram.web.middleware import MISSING_KEY

from tests.functions.conftest import SAMPLE_KEY, fresh_container_for
from tests.functions.invoke import invoke, load_event


@pytest.fixture
def provider(lambda_environment: str) -> Iterator[ContainerProvider]:
    fresh = fresh_container_for("memory")
    yield fresh
    fresh.close()


def call(relative: str, memory_id: str | None = None) -> tuple[int, dict[str, Any], dict[str, str]]:
    event = load_event(relative)
    if memory_id is not None:
        event["rawPath"] = event["rawPath"].replace("SAMPLE-ID", memory_id)
        event["requestContext"]["http"]["path"] = event["rawPath"]
        event["pathParameters"] = {"memory_id": memory_id}
    response = invoke("memory", event)
    return response["statusCode"], json.loads(response["body"]), response["headers"]


def test_store_event_writes_to_dynamodb(provider: ContainerProvider) -> None:
    status, body, headers = call("memory/post_memory.json")
    assert status == 201
    assert body["stored_in"] == {"vector": True, "structured_db": True}
    assert headers["x-request-id"] == "sample-store-1"
    stored = provider.get().records.get(body["id"])
    assert stored is not None and stored.content == "Acme Corp uses Next.js 14 with App Router"
    assert type(provider.get().records).__name__ == "DynamoDBRecordStore"


def test_search_and_query_events_find_the_stored_memory(provider: ContainerProvider) -> None:
    _, stored, _ = call("memory/post_memory.json")
    status, found, _ = call("memory/get_search.json")
    assert status == 200
    assert [hit["id"] for hit in found["results"]] == [stored["id"]]
    status, queried, _ = call("memory/get_query.json")
    assert status == 200 and queried["count"] == 1 and queried["results"][0]["id"] == stored["id"]


def test_read_update_delete_and_restore_events(provider: ContainerProvider) -> None:
    _, stored, _ = call("memory/post_memory.json")
    memory_id = stored["id"]
    status, record, _ = call("memory/get_memory.json", memory_id)
    assert status == 200 and record["key"] == "acme-tech-stack"

    status, updated, _ = call("memory/patch_memory.json", memory_id)
    assert status == 200 and updated["updated_fields"] == ["content", "importance"]
    assert provider.get().records.get(memory_id).content == "Acme Corp uses Next.js 15"  # type: ignore[union-attr]

    status, restored, _ = call("memory/post_restore.json", memory_id)
    assert status == 200 and restored["restored"] is False  # still active: nothing to restore

    status, deleted, _ = call("memory/delete_memory.json", memory_id)
    assert status == 200 and deleted["reason"] == "Incorrect information"
    status, refused, _ = call("memory/post_restore.json", memory_id)
    assert status == 409 and "cannot be restored" in refused["error"]
    _, found, _ = call("memory/get_search.json")
    assert found["count"] == 0


def test_history_event_shows_the_supersede_chain_from_dynamodb(provider: ContainerProvider) -> None:
    _, first, _ = call("memory/post_memory.json")
    newer = provider.get().memory.store(MemoryDraft(
        type=MemoryType.FACT, content="Acme Corp moved to Next.js 15", source_agent="claude-code",
        client_id="acme-corp", key="acme-tech-stack")).memory
    status, history, headers = call("memory/get_history.json", newer.id)
    assert status == 200, history
    assert headers["x-request-id"] == "sample-history-1"
    assert [link["id"] for link in history["chain"]] == [first["id"], newer.id]
    assert [link["active"] for link in history["chain"]] == [False, True]
    assert history["memory"]["id"] == newer.id and history["decay"]["decays"] is True
    assert [event["kind"] for event in history["events"]][:3] == ["created", "superseded", "created"]


def test_invalid_and_unauthenticated_events_are_refused(provider: ContainerProvider) -> None:
    status, body, _ = call("memory/post_memory_invalid.json")
    assert status == 400 and body["error"].startswith("type:")
    status, body, headers = call("memory/get_search_unauthenticated.json")
    assert status == 401 and body == {"error": MISSING_KEY}
    assert headers["x-request-id"] == "sample-search-401"


def test_unknown_memory_is_404(provider: ContainerProvider) -> None:
    status, body, _ = call("memory/get_memory.json", "00000000-0000-0000-0000-000000000000")
    assert status == 404 and "not found" in body["error"]


# -- scoped API keys: the keys live in DynamoDB, and the function honours their clients and roles ------------


def with_key(event: dict[str, Any], key: str, **body_changes: Any) -> dict[str, Any]:
    event["headers"]["x-api-key"] = key
    if body_changes:
        event["body"] = json.dumps({**json.loads(event["body"]), **body_changes})
    return event


def call_as(key: str, relative: str, memory_id: str | None = None, **body_changes: Any) -> tuple[int, dict[str, Any]]:
    event = with_key(load_event(relative), key, **body_changes)
    if memory_id is not None:
        event["rawPath"] = event["rawPath"].replace("SAMPLE-ID", memory_id)
        event["requestContext"]["http"]["path"] = event["rawPath"]
        event["pathParameters"] = {"memory_id": memory_id}
    response = invoke("memory", event)
    return response["statusCode"], json.loads(response["body"])


def post(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    response = invoke("memory", with_key(load_event("memory/post_memory.json", body=json.dumps(body)), SAMPLE_KEY))
    return response["statusCode"], json.loads(response["body"])


def test_a_scoped_key_sees_and_changes_only_its_clients(provider: ContainerProvider) -> None:
    keys = provider.get().keys
    acme = keys.create(KeyDraft(name="acme-agent", role=Role.WRITE, clients=["acme-corp"])).key
    reader = keys.create(KeyDraft(name="acme-reader", role=Role.READ, clients=["acme-corp"])).key
    globex = keys.create(KeyDraft(name="globex-agent", role=Role.WRITE, clients=["globex"])).key
    assert type(provider.get().keys._store).__name__ == "DynamoDBApiKeyStore"

    status, mine = call_as(acme, "memory/post_memory.json")
    assert status == 201
    _, theirs = call_as(SAMPLE_KEY, "memory/post_memory.json", client_id="globex",
                        content="Globex Corp uses Next.js 14 with App Router")
    assert call_as(acme, "memory/post_memory.json", client_id="globex")[0] == 403
    assert call_as(reader, "memory/post_memory.json", content="Reader notes")[0] == 403

    status, found = call_as(acme, "memory/get_search.json")
    assert status == 200 and [hit["id"] for hit in found["results"]] == [mine["id"]]
    status, found = call_as(globex, "memory/get_query.json")  # no client_id: limited to globex, not refused
    assert status == 200 and [hit["id"] for hit in found["results"]] == [theirs["id"]]
    assert call_as(globex, "memory/get_search.json")[0] == 403  # the sample asks for acme-corp by name

    assert call_as(reader, "memory/get_memory.json", mine["id"])[0] == 200
    for relative in ("memory/get_memory.json", "memory/patch_memory.json", "memory/delete_memory.json",
                     "memory/post_restore.json"):
        assert call_as(acme, relative, theirs["id"])[0] == 403, relative
    assert provider.get().records.get(theirs["id"]).active  # type: ignore[union-attr]


def test_a_revoked_or_forged_key_is_refused_by_the_function(provider: ContainerProvider) -> None:
    keys = provider.get().keys
    minted = keys.create(KeyDraft(name="acme-agent", role=Role.WRITE, clients=["acme-corp"]))
    assert call_as(minted.key, "memory/get_query.json")[0] == 200
    forged = minted.key[:-4] + ("AAAA" if not minted.key.endswith("AAAA") else "BBBB")
    assert call_as(forged, "memory/get_query.json") == (401, {"error": "invalid API key"})
    keys.revoke(minted.record.id)
    assert call_as(minted.key, "memory/get_query.json") == (401, {"error": "invalid API key"})
    assert call_as(SAMPLE_KEY, "memory/get_query.json")[0] == 200  # the bootstrap key still works


def test_scrubbing_on_dynamodb_keeps_distinct_texts_apart_and_secrets_out(provider: ContainerProvider) -> None:
    event = {"type": "event", "source_agent": "claude-code", "client_id": "acme-corp"}
    secret = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"

    authentication = post({**event, "content": "Token authentication failed on server alpha"})
    validation = post({**event, "content": "Token validation failed on server alpha"})
    with_secret = post({**event, "content": f"export AWS_SECRET_ACCESS_KEY={secret}",
                        "metadata": {"vpn": {"password": "correct horse battery staple"}}})
    again = post({**event, "content": f"export AWS_SECRET_ACCESS_KEY={secret}"})

    assert authentication[0] == validation[0] == with_secret[0] == 201
    assert authentication[1]["id"] != validation[1]["id"]
    assert again[0] == 200 and again[1]["id"] == with_secret[1]["id"]
    stored = provider.get().records.get(with_secret[1]["id"])
    assert stored is not None and secret not in stored.content and "horse" not in json.dumps(stored.metadata)
    assert stored.content.startswith("export AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-access-key:")
