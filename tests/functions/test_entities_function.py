"""The entities function: its sample events against DynamoDB (moto), with memories stored through the service."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from zengram.assembly.provider import ContainerProvider
from zengram.memory.domain.entities import EntityType
from zengram.memory.domain.models import MemoryChanges, MemoryType
from zengram.memory.domain.requests import MemoryDraft

from tests.functions.conftest import fresh_container_for
from tests.functions.invoke import invoke, load_event


@pytest.fixture
def provider(lambda_environment: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[ContainerProvider]:
    # The text's entities only: these tests count them (the writers' own are tested in tests/compat).
    monkeypatch.setenv("ZENGRAM_WRITER_ENTITIES", "false")
    fresh = fresh_container_for("entities")
    yield fresh
    fresh.close()


@pytest.fixture
def stored_ids(provider: ContainerProvider) -> list[str]:
    """Two memories naming Next.js and PostgreSQL (one by alias), one naming Next.js alone."""
    memory = provider.get().memory
    contents = ["Acme runs Next.js on postgres", "The Next.js upgrade shipped", "Billing moved to PostgreSQL 16"]
    return [memory.store(MemoryDraft(type=MemoryType.EVENT, content=content, source_agent="claude-code",
                                     client_id="acme-corp")).memory.id for content in contents]


def call(event: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    response = invoke("entities", event)
    return response["statusCode"], json.loads(response["body"])


def test_list_stats_and_lookup_by_alias(stored_ids: list[str]) -> None:
    status, listed = call(load_event("entities/list_entities.json"))
    assert status == 200, listed
    assert [(e["name"], e["mention_count"]) for e in listed["entities"]] == [("Next.js", 2), ("PostgreSQL", 2)]

    status, stats = call(load_event("entities/get_entity_stats.json"))
    assert status == 200 and stats["total"] == 2 and stats["by_type"] == {"technology": 2}

    status, entity = call(load_event("entities/get_entity.json"))  # GET /entities/nextjs
    assert status == 200, entity
    assert (entity["name"], entity["type"], entity["mention_count"]) == ("Next.js", "technology", 2)
    assert "nextjs" in entity["aliases"]
    assert entity["related"] == [{"name": "PostgreSQL", "strength": 1}]

    status, linked = call(load_event("entities/get_entity_memories.json"))
    assert status == 200 and [m["id"] for m in linked["memories"]] == [stored_ids[1], stored_ids[0]]


def test_graph_event_draws_the_co_occurrence(stored_ids: list[str]) -> None:
    event = load_event("entities/get_entity_graph.json")
    event["queryStringParameters"]["min_strength"] = "1"
    event["rawQueryString"] = "type=technology&limit=60&min_strength=1"
    status, graph = call(event)
    assert status == 200, graph
    assert sorted(node["canonical_name"] for node in graph["nodes"]) == ["Next.js", "PostgreSQL"]
    assert graph["edges"] == [{"source": "next.js", "target": "postgresql", "strength": 1}]

    status, strong = call(load_event("entities/get_entity_graph.json"))  # min_strength=2: one memory names both
    assert status == 200 and strong["edges"] == [] and strong["node_count"] == 2


def test_reclassify_previews_then_applies(provider: ContainerProvider, stored_ids: list[str]) -> None:
    status, preview = call(load_event("entities/post_reclassify_dry_run.json"))
    assert status == 200, preview
    assert preview["preview"] == [{"name": "PostgreSQL", "old_type": "technology", "new_type": "system",
                                   "memories_affected": 2}] and preview["applied"] is False
    entities = provider.get().entities
    assert entities.detail("PostgreSQL").entity.type is EntityType.TECHNOLOGY

    status, applied = call(load_event("entities/post_reclassify.json"))
    assert status == 200 and applied["memories_updated"] == 2 and applied["event_id"]
    assert [item["name"] for item in applied["applied"]] == ["PostgreSQL"] and "preview" not in applied
    assert entities.detail("PostgreSQL").entity.type is EntityType.SYSTEM
    store = provider.get().records
    for memory_id in (stored_ids[0], stored_ids[2]):
        memory = store.get(memory_id)
        assert memory is not None
        assert {ref.name: ref.type for ref in memory.entities}["PostgreSQL"] is EntityType.SYSTEM
    assert provider.get().outbox.pending_index(10) == []


def test_an_unknown_type_is_a_400_naming_the_field(stored_ids: list[str]) -> None:
    status, body = call(load_event("entities/post_reclassify_invalid.json"))
    assert status == 400 and body["error"].startswith("reclassifications.0.new_type:")


def test_linked_memories_of_one_client(provider: ContainerProvider, stored_ids: list[str]) -> None:
    other = provider.get().memory.store(MemoryDraft(type=MemoryType.EVENT, content="Globex pinned Next.js 15",
                                                    source_agent="n8n", client_id="globex")).memory.id
    event = load_event("entities/get_entity_memories.json")
    status, everyone = call(event)
    assert status == 200 and [m["id"] for m in everyone["memories"]] == [other, stored_ids[1], stored_ids[0]]

    event.update(rawQueryString="limit=20&client_id=acme-corp",
                 queryStringParameters={"limit": "20", "client_id": "acme-corp"})
    status, acme = call(event)
    assert status == 200 and [m["id"] for m in acme["memories"]] == [stored_ids[1], stored_ids[0]]


def test_a_second_real_run_fixes_memories_the_first_missed(provider: ContainerProvider,
                                                           stored_ids: list[str]) -> None:
    status, _ = call(load_event("entities/post_reclassify.json"))  # PostgreSQL → system
    store = provider.get().records
    missed = store.get(stored_ids[2])
    assert status == 200 and missed is not None
    store.update(missed.id, MemoryChanges(entities=[ref.model_copy(update={"type": EntityType.TECHNOLOGY})
                                                    for ref in missed.entities]), missed.updated_at)

    status, again = call(load_event("entities/post_reclassify.json"))

    assert status == 200 and again["unchanged"] == ["PostgreSQL"] and again["memories_updated"] == 1, again
    fixed = store.get(stored_ids[2])
    assert fixed is not None and [ref.type for ref in fixed.entities] == [EntityType.SYSTEM]
    assert provider.get().outbox.pending_index(10) == []
