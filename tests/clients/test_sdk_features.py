"""The SDK on the endpoints beyond memory CRUD: stats, entities, client fingerprints, consolidation,
reflect and research (the LLM is the scripted chat server)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from zengram.assembly.containers import build_container
from zengram.client import BrainClient, NotFoundError, ServiceUnavailableError
from zengram.embedded.app import build_embedded_app
from zengram.embedded.background import BackgroundServer
from zengram.memory.api.schemas.consolidation import ConsolidationStarted
from zengram.settings import Settings

from tests.llm_server import ScriptedLLMServer
from tests.support import API_KEY, HashingEmbedder, TickingClock


@pytest.fixture
def llm_brain(llm_settings: Settings) -> Iterator[BrainClient]:
    container = build_container(llm_settings, embedder=HashingEmbedder(), clock=TickingClock())
    with BackgroundServer(build_embedded_app(llm_settings, container)) as server, BrainClient(
        url=server.url, api_key=API_KEY, source_agent="sdk-test"
    ) as client:
        yield client
    container.close()


def test_stats_count_what_was_stored(brain: BrainClient) -> None:
    first = brain.store(type="fact", content="The VPN gateway is in Frankfurt", key="vpn-location")
    brain.store(type="fact", content="The VPN gateway is in Dublin", key="vpn-location")
    brain.store(type="event", content="Rotated the VPN certificates")

    stats = brain.stats()

    assert (stats.total_memories, stats.active, stats.superseded) == (3, 2, 1)
    assert {kind: count for kind, count in stats.by_type.items() if count} == {"fact": 2, "event": 1}
    assert brain.get(first.id).superseded_by is not None


def test_entities_are_typed_and_an_unknown_one_is_not_found(brain: BrainClient) -> None:
    brain.store(type="event", content="Acme moved its website to Next.js", client_id="acme")

    listing = brain.list_entities()
    stats = brain.entity_stats()
    raw = brain.entities("stats")
    with pytest.raises(NotFoundError):
        brain.entity("no-such-entity-anywhere")

    assert listing.count == len(listing.entities)
    assert stats.total == raw["total"]
    preview = brain.reclassify([{"name": "no-such-entity-anywhere", "new_type": "technology"}])
    assert preview.dry_run and preview.not_found == ["no-such-entity-anywhere"]


def test_client_fingerprints_round_trip(brain: BrainClient) -> None:
    created = brain.put_client("acme-corp", name="Acme Corp", aliases=["acme", "ACME Inc"], domains=["acme.com"])

    fetched = brain.get_client("acme-corp")
    listed = brain.list_clients()
    deleted = brain.delete_client("acme-corp")
    with pytest.raises(NotFoundError):
        brain.get_client("acme-corp")

    assert created.client_id == fetched.client_id == "acme-corp"
    assert fetched.aliases == ["acme", "ACME Inc"] and fetched.domains == ["acme.com"]
    assert [client.client_id for client in listed.clients] == ["acme-corp"]
    assert deleted.deleted


def test_consolidation_start_status_and_job(llm_brain: BrainClient) -> None:
    started = llm_brain.consolidate()
    job = llm_brain.consolidation_job(started.job_id)  # type: ignore[union-attr]
    status = llm_brain.consolidation_status()
    with pytest.raises(NotFoundError):
        llm_brain.consolidation_job("no-such-job")

    assert isinstance(started, ConsolidationStarted)
    assert job.job_id == started.job_id
    assert isinstance(status.is_running, bool)


def test_reflect_returns_the_llms_cited_synthesis(llm_brain: BrainClient, llm_server: ScriptedLLMServer) -> None:
    memory = llm_brain.store(type="decision", content="We deploy the API with blue-green releases")
    llm_server.script({"summary": "Deployments are blue-green.", "patterns": [f"blue-green [mem:{memory.id}]"],
                       "timeline": [], "contradictions": [], "gaps": ["rollback time"]})

    result = llm_brain.reflect("deployment", limit=5)

    assert result.reflection.summary == "Deployments are blue-green."
    assert result.cited_memory_ids == [memory.id]
    assert result.memories_analyzed == 1


def test_features_that_are_off_say_why(brain: BrainClient) -> None:
    brain.store(type="event", content="Something to reflect on")  # with no memories, reflect needs no LLM
    with pytest.raises(ServiceUnavailableError) as research:
        brain.research("what superseded the caching decision?")
    with pytest.raises(ServiceUnavailableError) as reflect:
        brain.reflect("anything")

    assert research.value.status_code == 503 and "RESEARCH_ENABLED" in research.value.error
    assert reflect.value.status_code == 503 and reflect.value.error


def test_search_takes_the_date_window_and_reference_date(brain: BrainClient) -> None:
    brain.store("event", "Migrated billing to PostgreSQL 16", valid_from="2026-01-10T09:00:00Z")
    brain.store("event", "Migrated search to OpenSearch 2.19", valid_from="2026-02-20T09:00:00Z")
    window = brain.search("migrated", date_from="2026-02-01T00:00:00Z", date_to="2026-02-28T00:00:00Z",
                          reference_date="2026-03-01T00:00:00Z", format="full")
    assert [hit["content"] for hit in window.results] == ["Migrated search to OpenSearch 2.19"]
    assert window.retrieval is not None and window.retrieval["date_window"]["from"].startswith("2026-02-01")
    assert brain.search("migrated", date_to="2026-01-31T00:00:00Z").count == 1
