"""The export function: sample events against DynamoDB, and an export → empty table → import round trip."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from zengram.assembly.provider import ContainerProvider
from zengram.memory.domain.requests import MemoryDraft

from tests.aws_support import fresh_dynamodb_store
from tests.functions.conftest import fresh_container_for
from tests.functions.invoke import invoke, load_event

IMPORTED_ID = "0b7c6a52-3f7e-4c1e-9a4f-1d2e3f405162"


@pytest.fixture
def provider(lambda_environment: str) -> Iterator[ContainerProvider]:
    fresh = fresh_container_for("export")
    yield fresh
    fresh.close()


def call(event: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    response = invoke("export", event)
    return response["statusCode"], json.loads(response["body"])


def test_import_and_export_events(provider: ContainerProvider) -> None:
    status, body = call(load_event("export/post_import.json"))
    assert status == 200, body
    assert (body["imported"], body["skipped"], body["failed"]) == (2, 0, 1)
    assert body["results"][0] == {"index": 0, "status": "imported", "id": IMPORTED_ID}
    assert body["results"][2]["error"].startswith("type:")
    stored = provider.get().records.get(IMPORTED_ID)
    assert stored is not None and stored.key == "acme-deploy-target"
    assert provider.get().outbox.pending_index(10) == []  # indexed

    status, exported = call(load_event("export/get_export.json"))
    assert status == 200 and exported["count"] == 2 and IMPORTED_ID in [m["id"] for m in exported["memories"]]

    status, again = call(load_event("export/post_import.json"))
    assert status == 200 and again["skipped"] == 2


def test_import_without_approval_is_403(provider: ContainerProvider) -> None:
    status, body = call(load_event("export/post_import_unapproved.json"))
    assert status == 403 and body["error"].startswith("operator_approved:")
    assert provider.get().records.count() == 0


def test_round_trip_through_an_empty_table(provider: ContainerProvider, monkeypatch: pytest.MonkeyPatch) -> None:
    memory = provider.get().memory
    drafts = [
        {"type": "fact", "content": "Acme uses Next.js 14", "key": "stack"},
        {"type": "fact", "content": "Acme uses Next.js 15", "key": "stack", "importance": "high"},
        {"type": "status", "content": "Deploy is green", "subject": "deploy", "status_value": "green"},
        {"type": "event", "content": "Acme churned"},
        {"type": "decision", "content": "Acme moves to Vercel", "metadata": {"ticket": 7}},
    ]
    stored = [memory.store(MemoryDraft.model_validate({"source_agent": "claude-code", "client_id": "acme-corp",
                                                        **draft})) for draft in drafts]
    memory.delete(stored[3].memory.id, by="claude-code", reason="wrong")
    export_all = load_event("export/get_export.json")
    status, original = call(export_all)
    assert status == 200 and original["count"] == 5

    with fresh_dynamodb_store() as empty:
        monkeypatch.setenv("ZENGRAM_DYNAMODB_TABLE", empty.table_name)
        fresh = fresh_container_for("export")
        try:
            event = load_event("export/post_import.json")
            event["body"] = json.dumps({"operator_approved": True, "data": original["memories"]})
            status, result = call(event)
            assert status == 200 and result["imported"] == 5, result
            status, restored = call(export_all)
            assert status == 200 and restored["memories"] == original["memories"]
            assert fresh.get().records.get(stored[0].memory.id) == provider.get().records.get(stored[0].memory.id)
        finally:
            fresh.close()
