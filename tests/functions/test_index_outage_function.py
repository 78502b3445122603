"""The Lambda handlers (DynamoDB on moto) with OpenSearch unreachable, down or refusing a document: records are
stored and served, search says 503, /stats reports the index's health, a warm container stops waiting on the index,
and the repair function gets past a document OpenSearch will never take."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from zengram.assembly.containers import build_container
from zengram.assembly.provider import ContainerProvider
from zengram.memory.domain.models import MemoryType
from zengram.memory.domain.requests import MemoryDraft
from zengram.serverless.jobs import repair_handler
from zengram.settings import Settings

from tests.functions.conftest import fresh_container_for
from tests.functions.invoke import FakeLambdaContext, invoke, load_event
from tests.opensearch_fake import FakeOpenSearch, unavailable

STORE_BODY = {"type": "event", "content": "", "source_agent": "billing-bot", "client_id": "acme-corp"}


def unused_local_url() -> str:
    """A URL nothing listens on: connections are refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def use_opensearch(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    for name, value in {"ZENGRAM_SEARCH_INDEX": "opensearch", "ZENGRAM_OPENSEARCH_URL": url,
                        "ZENGRAM_OPENSEARCH_REFRESH": "wait_for", "ZENGRAM_OPENSEARCH_RETRY_DELAY": "0"}.items():
        monkeypatch.setenv(name, value)


def call(group: str, relative: str, *, body: dict[str, Any] | None = None,
         memory_id: str | None = None) -> tuple[int, dict[str, Any]]:
    event = load_event(relative)
    if body is not None:
        event["body"] = json.dumps(body)
    if memory_id is not None:
        event["rawPath"] = event["rawPath"].replace("SAMPLE-ID", memory_id)
        event["requestContext"]["http"]["path"] = event["rawPath"]
        event["pathParameters"] = {"memory_id": memory_id}
    response = invoke(group, event)
    return response["statusCode"], json.loads(response["body"])


@pytest.fixture
def providers() -> Iterator[list[ContainerProvider]]:
    built: list[ContainerProvider] = []
    yield built
    for provider in built:
        provider.close()


def cold(group: str, providers: list[ContainerProvider]) -> ContainerProvider:
    provider = fresh_container_for(group)
    providers.append(provider)
    return provider


def test_a_cold_container_without_opensearch_stores_and_serves_records(
    lambda_environment: str, monkeypatch: pytest.MonkeyPatch, providers: list[ContainerProvider]
) -> None:
    use_opensearch(monkeypatch, unused_local_url())
    memory = cold("memory", providers)
    cold("export", providers)
    cold("briefing", providers)

    # The write is stored in DynamoDB and marked pending, not lost and not a 500
    status, stored = call("memory", "memory/post_memory.json")
    assert status == 201, stored
    assert stored["stored_in"] == {"vector": False, "structured_db": True}
    assert [m.id for m in memory.get().outbox.pending_index(10)] == [stored["id"]]

    # Routes that need only DynamoDB answer
    status, record = call("memory", "memory/get_memory.json", memory_id=stored["id"])
    assert status == 200 and record["content"] == "Acme Corp uses Next.js 14 with App Router"
    status, exported = call("export", "export/get_export.json")
    assert status == 200 and [row["id"] for row in exported["memories"]] == [stored["id"]]
    status, stats = call("briefing", "briefing/get_stats.json")
    assert status == 200, stats
    assert stats["total_memories"] == 1 and "vectors_count" not in stats
    assert (stats["index_health"]["status"], stats["index_health"]["pending_index"]) == ("unavailable", 1)
    assert "OpenSearch" in stats["index_health"]["error"]

    # Search cannot answer, and says so
    status, refused = call("memory", "memory/get_search.json")
    assert status == 503
    assert refused["error"].startswith("Search unavailable") and refused["retrieval"]["degraded"] is True


def test_a_warm_container_stops_waiting_on_an_index_that_is_down(
    lambda_environment: str, monkeypatch: pytest.MonkeyPatch, providers: list[ContainerProvider]
) -> None:
    with FakeOpenSearch() as fake:
        use_opensearch(monkeypatch, fake.url)
        memory = cold("memory", providers)
        status, first = call("memory", "memory/post_memory.json")
        assert status == 201 and first["stored_in"]["vector"] is True  # the index was up

        fake.outage = (503, unavailable())
        sent_before = len(fake.requests)
        written = [call("memory", "memory/post_memory.json", body={**STORE_BODY, "content": f"invoice {n} paid"})
                   for n in range(6)]

        assert [(status, body["stored_in"]["vector"]) for status, body in written] == [(201, False)] * 6
        # the first of them spent its retries (opensearch_max_attempts); the circuit then spared the other five
        assert len(fake.requests) - sent_before == Settings().opensearch_max_attempts
        pending = {m.id for m in memory.get().outbox.pending_index(10)}
        assert pending == {body["id"] for _, body in written}


def test_the_repair_function_gets_past_a_document_opensearch_refuses(
    lambda_environment: str, monkeypatch: pytest.MonkeyPatch, providers: list[ContainerProvider], minilm: Any
) -> None:
    with FakeOpenSearch() as fake:
        use_opensearch(monkeypatch, fake.url)
        monkeypatch.setenv("ZENGRAM_INDEX_REPAIR_BATCH", "10")
        monkeypatch.setenv("ZENGRAM_INDEX_REPAIR_ATTEMPTS", "2")
        # Given 25 records written while OpenSearch was down (three batches of the sweep)
        writer = build_container(Settings(), embedder=minilm)
        writer.memory.index_sync.ensure_compatible()
        fake.outage = (503, unavailable())
        memories = [writer.memory.store(MemoryDraft(type=MemoryType.DECISION, content=f"payment run {n} approved",
                                                    source_agent="billing-bot")).memory for n in range(25)]
        writer.close()
        fake.outage = None
        # ... the oldest of which OpenSearch will never take
        poison = memories[0]
        fake.refused[poison.id] = (400, "mapper_parsing_exception")

        # When the schedule fires (twice)
        sweep = repair_handler()
        first = sweep(load_event("repair/scheduled_repair.json"), FakeLambdaContext())
        second = sweep(load_event("repair/scheduled_repair.json"), FakeLambdaContext())

        # Then the other 24 are indexed at once; the refused one fails once per sweep, then is parked
        assert first == {"repaired": 24, "failed": 1, "parked": 0, "requeued": 0, "stopped": None, "pending_index": 1}
        assert second == {"repaired": 0, "failed": 1, "parked": 1, "requeued": 0, "stopped": None, "pending_index": 0}
        index_docs = fake.indices[next(iter(fake.indices))].docs
        assert set(index_docs) == {m.id for m in memories[1:]}

        # ... and /stats names it with its last error
        cold("briefing", providers)
        status, stats = call("briefing", "briefing/get_stats.json")
        assert status == 200
        health = stats["index_health"]
        assert (health["status"], health["pending_index"], health["parked"]) == ("degraded", 0, 1)
        [parked] = health["parked_records"]
        assert parked["id"] == poison.id and parked["attempts"] == 2
        assert "mapper_parsing_exception" in parked["last_error"]

        # When the cause is fixed and an operator sends {"retry_parked": true}
        del fake.refused[poison.id]
        retried = sweep({"retry_parked": True}, FakeLambdaContext())
        assert retried == {"repaired": 1, "failed": 0, "parked": 0, "requeued": 1, "stopped": None, "pending_index": 0}
        assert poison.id in index_docs
