"""The briefing function answers its sample events from DynamoDB records."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from zengram.assembly.provider import ContainerProvider
from zengram.memory.domain.requests import MemoryDraft

from tests.functions.conftest import fresh_container_for
from tests.functions.invoke import invoke, load_event


@pytest.fixture
def provider(lambda_environment: str) -> Iterator[ContainerProvider]:
    fresh = fresh_container_for("briefing")
    yield fresh
    fresh.close()


def call(relative: str) -> tuple[int, dict[str, Any]]:
    response = invoke("briefing", load_event(relative))
    return response["statusCode"], json.loads(response["body"])


def test_briefing_events(provider: ContainerProvider) -> None:
    memory = provider.get().memory
    other = memory.store(MemoryDraft.model_validate({
        "type": "decision", "content": "We move Acme to Vercel", "source_agent": "n8n", "client_id": "acme-corp"}))
    own = memory.store(MemoryDraft.model_validate({
        "type": "event", "content": "I reviewed the Acme contract", "source_agent": "claude-code",
        "client_id": "acme-corp"}))
    status, body = call("briefing/get_briefing.json")
    assert status == 200
    assert [entry["id"] for entry in body["decisions"]] == [other.memory.id] and body["events"] == []
    assert body["summary"]["agents_active"] == ["n8n"] and body["requesting_agent"] == "claude-code"
    assert body["summary"]["entities_mentioned"] == [  # the memory's own client and agent too, as upstream
        {"name": "acme-corp", "type": "client", "count": 1}, {"name": "n8n", "type": "agent", "count": 1},
        {"name": "Vercel", "type": "service", "count": 1}]
    assert body["brain_stats"] == {"total_memories": 2, "vectors_count": 2}
    status, body = call("briefing/get_briefing_summary_all.json")
    assert status == 200 and body["summary"]["total_entries"] == 2
    assert body["top_events"][0] == {"id": own.memory.id, "headline": "I reviewed the Acme contract",
                                     "source_agent": "claude-code", "client_id": "acme-corp", "importance": "medium",
                                     "created_at": body["top_events"][0]["created_at"]}
    assert "events" not in body and "brain_stats" not in body  # a summary briefing has the top_* lists instead
    assert type(provider.get().records).__name__ == "DynamoDBRecordStore"


def test_invalid_briefing_event_is_400(provider: ContainerProvider) -> None:
    status, body = call("briefing/get_briefing_invalid.json")
    assert status == 400 and body["error"].startswith("since:")


def test_stats_event_counts_from_dynamodb_counters(provider: ContainerProvider) -> None:
    memory = provider.get().memory
    memory.store(MemoryDraft.model_validate({
        "type": "fact", "content": "Acme hosts on Vercel", "source_agent": "n8n", "client_id": "acme-corp",
        "key": "acme-hosting"}))
    memory.store(MemoryDraft.model_validate({
        "type": "fact", "content": "Acme moved to AWS", "source_agent": "n8n", "client_id": "acme-corp",
        "key": "acme-hosting"}))
    gone = memory.store(MemoryDraft.model_validate({
        "type": "event", "content": "Kickoff call happened", "source_agent": "claude-code"}))
    memory.delete(gone.memory.id, by="claude-code", reason="wrong")

    status, body = call("briefing/get_stats.json")

    assert status == 200
    assert (body["total_memories"], body["active"], body["superseded"], body["deleted"]) == (2, 1, 1, 1)
    assert body["by_type"] == {"event": 0, "fact": 2, "decision": 0, "status": 0}
    assert body["index_health"] == {"status": "ok", "pending_index": 0, "parked": 0, "parked_records": []}
    assert body["vectors_count"] == 2
