"""The whole service with OpenSearch as its search index (ZENGRAM_SEARCH_INDEX=opensearch) on a real engine:
the API stores, searches, supersedes, deletes and restores through it, survives an unusable index, and
`reindex` rebuilds a lost one from the record store."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import Container, build_container
from zengram.embedded.app import build_embedded_app
from zengram.settings import Settings

from tests.api.helpers import search, search_ids, store
from tests.support import API_KEY, HashingEmbedder, TickingClock

CORPUS: list[dict[str, Any]] = [
    {"content": "The billing service stores invoices in PostgreSQL 16 on Amazon RDS", "type": "fact",
     "client_id": "acme-corp", "key": "acme-billing-db", "category": "semantic", "knowledge_category": "technical"},
    {"content": "Acme's marketing team wants a bolder brand palette with teal accents", "type": "event",
     "client_id": "acme-corp", "source_agent": "n8n", "knowledge_category": "brand"},
    {"content": "Globex's main contact is Hank Scorpio, VP of Operations", "type": "fact", "client_id": "globex",
     "key": "globex-contact", "category": "semantic", "knowledge_category": "relationship"},
    {"content": "We decided to ship the mobile app with React Native instead of Flutter", "type": "decision",
     "category": "procedural", "knowledge_category": "strategy", "source_agent": "cursor"},
    {"content": "Weekly sync with Initech moved to Thursday afternoons", "type": "event", "client_id": "initech",
     "knowledge_category": "meeting"},
    {"content": "Deploy pipeline is green after fixing the flaky Next.js build cache", "type": "status",
     "subject": "deploy-pipeline", "status_value": "green", "client_id": "acme-corp"},
]
SEARCHES: list[dict[str, Any]] = [
    {"q": "PostgreSQL invoices"},
    {"q": "brand colours", "client_id": "acme-corp"},
    {"q": "who is the contact at Globex", "type": "fact"},
    {"q": "mobile framework decision", "knowledge_category": "strategy"},
    {"q": "meeting moved", "source_agent": "claude-code"},
    {"q": "build cache"},
]


def settings_for(folder: Path, **overrides: Any) -> Settings:
    return Settings(data_dir=folder / "data", api_key=API_KEY, rate_limit_enabled=False, **overrides)


@pytest.fixture
def opensearch_settings(tmp_path: Path, url: str, alias: str) -> Settings:
    return settings_for(tmp_path, search_index="opensearch", opensearch_url=url, opensearch_alias=alias,
                        opensearch_refresh="true")


App = tuple[TestClient, Container]


@pytest.fixture
def start_app() -> Iterator[Callable[[Settings], App]]:
    started: list[tuple[TestClient, Container]] = []

    def start(settings: Settings) -> App:
        container = build_container(settings, embedder=HashingEmbedder(), clock=TickingClock())
        client = TestClient(build_embedded_app(settings, container), headers={"x-api-key": API_KEY})
        client.__enter__()
        started.append((client, container))
        return client, container

    yield start
    for client, container in started:
        client.__exit__(None, None, None)
        container.close()


@pytest.fixture
def app(start_app: Callable[[Settings], App], opensearch_settings: Settings) -> App:
    return start_app(opensearch_settings)


def store_corpus(client: TestClient) -> dict[str, str]:
    """Content → id."""
    return {entry["content"]: store(client, **entry)["id"] for entry in CORPUS}


def test_searches_find_what_was_stored(app: App) -> None:
    client, _ = app
    stored = store_corpus(client)
    top = search(client, "PostgreSQL invoices", format="full")["results"][0]
    assert top["id"] == stored[CORPUS[0]["content"]]
    assert set(top["retrieval_sources"]) == {"keyword", "vector"}
    assert search_ids(client, "contact", client_id="globex") == [stored[CORPUS[2]["content"]]]


def test_the_same_searches_answer_alike_on_the_embedded_index(start_app: Callable[[Settings], App],
                                                             opensearch_settings: Settings, tmp_path: Path) -> None:
    on_opensearch, _ = start_app(opensearch_settings)
    embedded, _ = start_app(settings_for(tmp_path / "embedded"))
    names = [{v: k for k, v in store_corpus(client).items()} for client in (on_opensearch, embedded)]

    for params in SEARCHES:
        found = [[name[hit] for hit in search_ids(client, **params)] for client, name in
                 zip((on_opensearch, embedded), names, strict=True)]
        assert set(found[0]) == set(found[1]), params
        assert found[0][0] == found[1][0], params


def test_supersede_restore_and_delete_move_memories_in_and_out_of_results(app: App) -> None:
    client, _ = app
    old = store(client, "Escalation owner is Dana", type="fact", client_id="globex", key="escalation-owner")
    new = store(client, "Escalation owner is Hank", type="fact", client_id="globex", key="escalation-owner")
    assert search_ids(client, "escalation owner") == [new["id"]]
    assert set(search_ids(client, "escalation owner", include_superseded=True)) == {old["id"], new["id"]}

    assert client.post(f"/memory/{old['id']}/restore").status_code == 200  # the old fact holds the key again
    assert search_ids(client, "escalation owner") == [old["id"]]
    assert client.delete(f"/memory/{old['id']}").status_code == 200
    assert search_ids(client, "escalation owner") == []


def test_storing_an_event_rewrites_only_the_keyword_text_of_the_one_before(app: App, engine: Any,
                                                                           alias: str) -> None:
    client, _ = app
    first = store(client, "The deploy failed on Friday", source_agent="n8n")["id"]
    vector_before = engine.get(index=alias, id=first)["_source"]["vector"]
    store(client, "Rolled back to the previous release", source_agent="n8n")

    stored = engine.get(index=alias, id=first)["_source"]
    assert "Rolled back" in stored["text"] and stored["text"].startswith("The deploy failed on Friday")
    assert stored["vector"] == vector_before


def test_an_unusable_index_answers_503_and_writes_still_land(start_app: Callable[[Settings], App],
                                                             opensearch_settings: Settings, engine: Any,
                                                             alias: str) -> None:
    # The circuit breaker lets the next call through at once, so the repair below meets the reopened index.
    client, container = start_app(opensearch_settings.model_copy(update={"index_circuit_open_seconds": 0}))
    store(client, "Staging database runs PostgreSQL 16")
    concrete = next(iter(engine.indices.get_alias(name=alias)))
    engine.indices.close(index=concrete)
    try:
        response = client.get("/memory/search", params={"q": "PostgreSQL"})
        assert response.status_code == 503
        assert "index_closed_exception" in response.json()["error"]
        assert response.json()["retrieval"]["degraded"] is True
        written = store(client, "Production database runs PostgreSQL 15")
        assert written["stored_in"] == {"vector": False, "structured_db": True}
        assert [memory.id for memory in container.outbox.pending_index(10)] == [written["id"]]
    finally:
        engine.indices.open(index=concrete, wait_for_active_shards=1)

    assert container.memory.index_sync.repair().indexed == 1
    assert written["id"] in search_ids(client, "production database")


def test_reindex_rebuilds_a_lost_index_from_the_records(app: App, engine: Any, alias: str) -> None:
    client, container = app
    stored = store_corpus(client)
    engine.indices.delete(index=next(iter(engine.indices.get_alias(name=alias))))
    assert search_ids(client, "PostgreSQL invoices") == []

    assert container.memory.index_sync.reindex() == len(CORPUS)
    assert container.index.count() == len(CORPUS)
    assert search_ids(client, "PostgreSQL invoices")[0] == stored[CORPUS[0]["content"]]
    hit = engine.search(index=alias, body={"query": {"term": {"id": stored[CORPUS[0]["content"]]}}})
    assert np.isclose(np.linalg.norm(hit["hits"]["hits"][0]["_source"]["vector"]), 1.0, atol=1e-6)
