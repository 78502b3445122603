"""Entities over HTTP: extraction at write time (and on PATCH), the registry routes, reclassify, the search
`entity` filter, briefing's top entities and export/import of a memory's entities."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import Container, build_container
from zengram.embedded.app import build_embedded_app
from zengram.memory.domain.entities import EntityRef
from zengram.memory.domain.models import Memory, MemoryChanges
from zengram.memory.ports import EntityStore
from zengram.memory.services.indexing import IndexSync
from zengram.settings import Settings

from tests.api.helpers import assert_error, get, search_ids, store
from tests.support import API_KEY, HashingEmbedder, TickingClock, pending_index


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Entities of the text only: these tests are about extraction and the registry; the writers' own entities
    (the default, as upstream) are tested in tests/compat/test_store_compat.py."""
    return settings.model_copy(update={"writer_entities": False})


@pytest.fixture
def api(settings: Settings, hashing_container: Container) -> Iterator[TestClient]:
    """The embedded app with the cheap embedder: these tests are about entities, not about meaning."""
    with TestClient(build_embedded_app(settings, hashing_container), headers={"x-api-key": API_KEY}) as client:
        yield client


def entities_of(client: TestClient, memory_id: str) -> list[tuple[str, str]]:
    return [(ref["name"], ref["type"]) for ref in get(client, memory_id)["entities"]]


def entity(client: TestClient, name: str) -> dict[str, Any]:
    response = client.get(f"/entities/{name}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def linked_ids(client: TestClient, name: str, **params: Any) -> list[str]:
    response = client.get(f"/entities/{name}/memories", params=params)
    assert response.status_code == 200, response.text
    return [memory["id"] for memory in response.json()["memories"]]


def reclassify(client: TestClient, *changes: tuple[str, str], expect: int = 200, **body: Any) -> dict[str, Any]:
    response = client.post("/entities/reclassify", json={
        "reclassifications": [{"name": name, "new_type": new_type} for name, new_type in changes], **body})
    assert response.status_code == expect, response.text
    result: dict[str, Any] = response.json()
    return result


# -- extraction ---------------------------------------------------------------------------------------------


def test_store_extracts_technologies_aliases_services_and_domains(api: TestClient) -> None:
    created = store(api, "Acme moved the reactive dashboard to Next.js on postgres; invoices go through "
                         "Stripe, docs live at https://docs.acme.com/billing")

    refs = get(api, created["id"])["entities"]
    assert [(r["name"], r["type"], r["confidence"]) for r in refs] == [
        ("Next.js", "technology", 0.95), ("PostgreSQL", "technology", 0.9), ("Stripe", "service", 0.95),
        ("docs.acme.com", "domain", 0.85),
    ]  # "reactive" is not React


def test_known_clients_people_and_agents_are_entities(api: TestClient) -> None:
    response = api.put("/clients/acme-corp", json={"name": "Acme Corporation", "aliases": ["Acme Corp"],
                                                   "people": ["Jane Doe"], "domains": ["acme.com"]})
    assert response.status_code in (200, 201), response.text
    by_bot = store(api, "deploy-bot restarted the Acme Corp workers after Jane Doe asked", source_agent="deploy-bot",
                   client_id="acme-corp")
    mention = store(api, "Asked deploy-bot to retry the acme.com certificate renewal", client_id="acme-corp")

    assert entities_of(api, by_bot["id"]) == [("deploy-bot", "agent"), ("acme-corp", "client"),
                                              ("Jane Doe", "person")]
    # deploy-bot is a registered agent now, so another agent's memory naming it links it too.
    assert entities_of(api, mention["id"]) == [("deploy-bot", "agent"), ("acme.com", "domain")]
    client_entity = entity(api, "Acme Corp")  # a client alias resolves to the client entity
    assert (client_entity["name"], client_entity["type"]) == ("acme-corp", "client")
    assert client_entity["aliases"] == ["Acme Corp", "Acme Corporation"]


def test_a_client_described_after_the_first_writes_is_recognised_at_once(api: TestClient) -> None:
    store(api, "Warm-up memory, so every cache of known names is loaded")
    response = api.put("/clients/globex", json={"aliases": ["Globex Corporation"]})
    assert response.status_code == 201, response.text

    mention = store(api, "Globex Corporation signed the renewal")

    assert ("globex", "client") in entities_of(api, mention["id"])


def test_patch_re_extracts_and_keeps_counts_honest(api: TestClient) -> None:
    first = store(api, "The billing worker runs on Kubernetes and Redis")
    other = store(api, "Redis holds the session cache")

    response = api.patch(f"/memory/{first['id']}", json={"content": "The billing worker runs on Kubernetes and Kafka"})
    assert response.status_code == 200, response.text

    assert entities_of(api, first["id"]) == [("Kubernetes", "technology"), ("Kafka", "technology")]
    redis = entity(api, "redis")
    assert redis["mention_count"] == 1 and linked_ids(api, "redis") == [other["id"]]
    assert redis["related"] == []  # the Kubernetes–Redis edge went with the old content
    assert entity(api, "kubernetes")["related"] == [{"name": "Kafka", "strength": 1}]
    assert search_ids(api, "billing", entity="redis") == [other["id"]]
    assert search_ids(api, "billing", entity="kafka") == [first["id"]]


def test_delete_unlinks_the_memory(api: TestClient) -> None:
    gone = store(api, "Terraform state moved to S3")
    api.request("DELETE", f"/memory/{gone['id']}", json={"reason": "wrong"})

    assert entity(api, "Terraform")["mention_count"] == 0
    assert linked_ids(api, "Terraform") == []


# -- registry routes ----------------------------------------------------------------------------------------


def test_get_entity_resolves_aliases_and_lists_related(api: TestClient) -> None:
    store(api, "The storefront runs Next.js with PostgreSQL")
    store(api, "Next.js preview deploys go to Vercel")
    store(api, "Nightly PostgreSQL backups")

    for spelling in ("Next.js", "nextjs", "NEXT.JS", "next js"):
        body = entity(api, spelling)
        assert (body["name"], body["type"], body["mention_count"]) == ("Next.js", "technology", 2), spelling
    body = entity(api, "nextjs")
    assert body["aliases"] == ["next js", "nextjs"]
    assert body["related"] == [{"name": "PostgreSQL", "strength": 1}, {"name": "Vercel", "strength": 1}]
    assert body["first_seen"] < body["last_seen"]


def test_unknown_entity_is_404_naming_the_entity(api: TestClient) -> None:
    assert_error(api.get("/entities/Nonexistium"), 404, "entity")
    assert_error(api.get("/entities/Nonexistium/memories"), 404, "entity")


def test_list_is_most_mentioned_first_by_type_and_paged(api: TestClient) -> None:
    store(api, "Python and Django on PostgreSQL, tickets in Jira")
    store(api, "Python scripts load PostgreSQL")
    store(api, "Python notebooks")

    everything = api.get("/entities").json()
    assert [e["name"] for e in everything["entities"]] == ["Python", "PostgreSQL", "Django", "Jira"]
    assert everything["count"] == 4 and everything["limit"] == 50 and everything["offset"] == 0
    page = api.get("/entities", params={"limit": 2, "offset": 1}).json()
    assert [e["name"] for e in page["entities"]] == ["PostgreSQL", "Django"]
    services = api.get("/entities", params={"type": "service"}).json()
    assert [e["name"] for e in services["entities"]] == ["Jira"] and services["type"] == "service"


@pytest.mark.parametrize(("path", "params", "field"), [
    ("/entities", {"limit": "501"}, "limit"),
    ("/entities", {"limit": "0"}, "limit"),
    ("/entities", {"offset": "-1"}, "offset"),
    ("/entities", {"offset": "1000001"}, "offset"),
    ("/entities", {"type": "database"}, "type"),
    ("/entities/Python/memories", {"limit": "101"}, "limit"),
])
def test_bad_parameters_are_400_naming_the_field(api: TestClient, path: str, params: dict[str, str],
                                                 field: str) -> None:
    store(api, "Python everywhere")
    assert_error(api.get(path, params=params), 400, field)


def test_linked_memories_are_newest_first_and_limited(api: TestClient) -> None:
    ids = [store(api, f"GraphQL schema change number {n}")["id"] for n in range(3)]

    assert linked_ids(api, "graphql") == ids[::-1]
    assert linked_ids(api, "graphql", limit=2) == ids[:0:-1]


def test_linked_memories_of_one_client_only(api: TestClient) -> None:
    # Given two old Acme memories naming Redis, and 120 newer ones of another tenant (beyond a first read)
    acme = [store(api, f"Acme session cache {n} is Redis", client_id="acme-corp")["id"] for n in range(2)]
    others = [{"type": "event", "content": f"Globex queue {n} runs on Redis", "source_agent": "n8n",
               "client_id": "globex", "created_at": f"2027-01-01T00:{n // 60:02d}:{n % 60:02d}Z"} for n in range(120)]
    assert api.post("/export/import", json={"operator_approved": True, "data": others}).json()["imported"] == 120

    # Then client_id keeps to its tenant, newest first, and limit still applies
    assert linked_ids(api, "redis", client_id="acme-corp") == acme[::-1]
    assert linked_ids(api, "redis", client_id="acme-corp", limit=1) == [acme[1]]
    assert linked_ids(api, "redis", client_id="initech") == []
    globex = api.get("/entities/redis/memories", params={"client_id": "globex", "limit": 100}).json()["memories"]
    assert len(globex) == 100 and {memory["client_id"] for memory in globex} == {"globex"}
    assert set(acme).isdisjoint(linked_ids(api, "redis", limit=100))  # without it: the newest of every tenant
    assert_error(api.get("/entities/redis/memories", params={"client_id": "-acme"}), 400, "client_id")


class CountingEntityStore:
    """The entity store, counting the linked memory ids it hands out (whole lists, or as far as iterated)."""

    def __init__(self, inner: EntityStore) -> None:
        self._inner = inner
        self.ids_read = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def memory_ids(self, key: str, limit: int | None = None) -> list[str]:
        ids = self._inner.memory_ids(key, limit)
        self.ids_read += len(ids)
        return ids

    def iter_memory_ids(self, key: str, page_size: int = 100) -> Iterator[str]:
        for memory_id in self._inner.iter_memory_ids(key, page_size):
            self.ids_read += 1
            yield memory_id


def test_linked_memories_of_one_client_read_only_as_far_as_needed(api: TestClient, hashing_container: Container,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # Given 120 Globex memories naming Redis, newer than two Acme ones, and a count of what the service reads
    acme = [store(api, f"Acme session cache {n} is Redis", client_id="acme-corp")["id"] for n in range(2)]
    others = [{"type": "event", "content": f"Globex queue {n} runs on Redis", "source_agent": "n8n",
               "client_id": "globex", "created_at": f"2027-01-01T00:{n // 60:02d}:{n % 60:02d}Z"} for n in range(120)]
    imported = api.post("/export/import", json={"operator_approved": True, "data": others}).json()
    newest_globex = [item["id"] for item in imported["results"][::-1][:5]]
    service = hashing_container.entities
    links = CountingEntityStore(service._entities)
    monkeypatch.setattr(service, "_entities", links)
    records_read: list[int] = []
    get_many = service._records.get_many

    def counting_get_many(ids: Sequence[str]) -> dict[str, Memory]:
        records_read.append(len(ids))
        return get_many(ids)

    monkeypatch.setattr(service._records, "get_many", counting_get_many)

    # When the five newest Globex memories are asked for, then five links and five records are read, not 122
    assert linked_ids(api, "redis", client_id="globex", limit=5) == newest_globex
    assert (links.ids_read, records_read) == (5, [5])

    # And a tenant whose memories lie behind the others' is still found, newest first
    links.ids_read, records_read[:] = 0, []
    assert linked_ids(api, "redis", client_id="acme-corp") == acme[::-1]
    assert links.ids_read == 122 and max(records_read) <= 100


def test_stats_count_by_type_and_name_the_most_mentioned(api: TestClient) -> None:
    store(api, "Slack alerts for the Docker builds")
    store(api, "Docker images are scanned")

    stats = api.get("/entities/stats").json()
    assert stats["total"] == 2 and stats["by_type"] == {"service": 1, "technology": 1}
    assert [e["name"] for e in stats["top_mentioned"]] == ["Docker", "Slack"]


def test_entity_routes_need_the_api_key(api: TestClient) -> None:
    for method, path in (("GET", "/entities"), ("GET", "/entities/stats"), ("GET", "/entities/x"),
                         ("GET", "/entities/x/memories"), ("POST", "/entities/reclassify")):
        assert_error(api.request(method, path, headers={"x-api-key": ""}), 401)


# -- reclassify ---------------------------------------------------------------------------------------------


def test_reclassify_dry_run_changes_nothing(api: TestClient) -> None:
    created = store(api, "Invoices are stored in PostgreSQL")
    before = get(api, created["id"])

    preview = reclassify(api, ("postgres", "system"), ("Nonexistium", "system"), ("Invoices", "system"))

    assert preview["dry_run"] is True
    assert preview["preview"] == [  # upstream's items: the change, then each name not found
        {"name": "PostgreSQL", "old_type": "technology", "new_type": "system", "memories_affected": 1},
        {"name": "Nonexistium", "old_type": None, "new_type": "system", "memories_affected": 0,
         "error": "Entity not found"},
        {"name": "Invoices", "old_type": None, "new_type": "system", "memories_affected": 0,
         "error": "Entity not found"},
    ]
    assert preview["applied"] is False
    assert preview["not_found"] == ["Nonexistium", "Invoices"] and preview["memories_updated"] == 0
    assert "event_id" not in preview
    assert entity(api, "PostgreSQL")["type"] == "technology"
    assert get(api, created["id"]) == before


def test_reclassify_updates_registry_records_index_and_logs_an_event(api: TestClient,
                                                                     hashing_container: Container) -> None:
    ids = [store(api, f"Ledger service {n} writes to PostgreSQL")["id"] for n in range(3)]
    unrelated = store(api, "Kafka topics were compacted")
    revisions = {memory_id: get(api, memory_id)["revision"] for memory_id in ids}

    result = reclassify(api, ("PostgreSQL", "system"), dry_run=False)

    assert result["memories_updated"] == 3 and result["indexed"] is True
    assert entity(api, "postgresql")["type"] == "system"
    for memory_id in ids:
        record = get(api, memory_id)
        assert {ref["name"]: ref["type"] for ref in record["entities"]} == {"PostgreSQL": "system"}
        assert record["revision"] == revisions[memory_id] + 1
    assert get(api, unrelated["id"])["revision"] == 1
    assert pending_index(hashing_container) == []  # the index holds the new revisions
    assert set(ids) <= set(search_ids(api, "ledger", entity="PostgreSQL"))
    event = get(api, result["event_id"])
    assert (event["type"], event["source_agent"], event["importance"]) == ("event", "zengram", "medium")
    assert "PostgreSQL: technology → system (3 memories)" in event["content"]
    # The registry's type sticks for memories stored later.
    later = store(api, "Reports read PostgreSQL replicas")
    assert entities_of(api, later["id"]) == [("PostgreSQL", "system")]
    stats = api.get("/entities/stats").json()
    assert stats["by_type"]["system"] == 1 and "technology" in stats["by_type"]


def test_reclassify_rewrites_linked_memories_in_chunks_of_100(api: TestClient, hashing_container: Container,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    records = [{"type": "event", "content": f"Worker {n} caches sessions in Redis", "source_agent": "n8n"}
               for n in range(230)]
    imported = api.post("/export/import", json={"operator_approved": True, "data": records}).json()
    assert imported["imported"] == 230
    index_sync = hashing_container.memory.index_sync
    pushed: list[int] = []

    def spy(memories: Sequence[Memory]) -> bool:
        pushed.append(len(memories))
        return IndexSync.refresh_attributes(index_sync, memories)

    monkeypatch.setattr(index_sync, "refresh_attributes", spy)

    result = reclassify(api, ("redis", "system"), dry_run=False)

    assert result["memories_updated"] == 230 and result["indexed"] is True
    assert pushed == [100, 100, 30]  # each chunk's records reach the index before the next chunk is read
    assert pending_index(hashing_container) == []
    assert all(entities_of(api, item["id"]) == [("Redis", "system")] for item in imported["results"][::23])


def test_a_second_real_run_brings_stragglers_in_line(api: TestClient, hashing_container: Container,
                                                     clock: TickingClock) -> None:
    # Given a reclassification, and a memory that still names the entity with the old type (it was written
    # while the run went on, or the run was cut off before reaching it)
    first, straggler = (store(api, f"Ledger {n} writes to PostgreSQL")["id"] for n in range(2))
    reclassify(api, ("PostgreSQL", "system"), dry_run=False)
    old = get(api, straggler)["entities"]
    hashing_container.records.update(straggler, MemoryChanges(entities=[
        EntityRef.model_validate({**ref, "type": "technology"}) for ref in old]), clock.now())
    assert entities_of(api, straggler) == [("PostgreSQL", "technology")]

    # When it is asked for again: a preview changes nothing, a real run fixes the straggler only
    preview = reclassify(api, ("postgres", "system"))
    assert preview["unchanged"] == ["PostgreSQL"] and preview["memories_updated"] == 0
    assert entities_of(api, straggler) == [("PostgreSQL", "technology")]
    result = reclassify(api, ("postgres", "system"), dry_run=False)

    # Then
    assert result["unchanged"] == ["PostgreSQL"] and result["applied"] == [] and "event_id" not in result
    assert result["memories_updated"] == 1
    assert entities_of(api, straggler) == entities_of(api, first) == [("PostgreSQL", "system")]
    assert pending_index(hashing_container) == []


def test_reclassify_of_the_current_type_is_unchanged(api: TestClient) -> None:
    store(api, "Docker everywhere")
    result = reclassify(api, ("Docker", "technology"), dry_run=False)
    assert result["applied"] == [] and result["unchanged"] == ["Docker"] and "event_id" not in result
    assert "preview" not in result


@pytest.mark.parametrize(("body", "field"), [
    ({"reclassifications": []}, "reclassifications"),
    ({"reclassifications": [{"name": "Docker", "new_type": "system"}] * 101}, "reclassifications"),
    ({"reclassifications": [{"name": "Docker", "new_type": "database"}]}, "reclassifications.0.new_type"),
    ({"reclassifications": [{"name": "", "new_type": "system"}]}, "reclassifications.0.name"),
    ({"reclassifications": [{"new_type": "system"}]}, "reclassifications.0.name"),
    ({"dry_run": False}, "reclassifications"),
])
def test_reclassify_refuses_bad_bodies(api: TestClient, body: dict[str, Any], field: str) -> None:
    store(api, "Docker everywhere")
    assert_error(api.post("/entities/reclassify", json=body), 400, field)
    assert entity(api, "Docker")["type"] == "technology"


# -- search, briefing, export -------------------------------------------------------------------------------


def test_entity_filter_uses_extracted_entities_not_words(api: TestClient) -> None:
    react = store(api, "The admin UI is written in React")
    verb = store(api, "Support must react within an hour")

    assert search_ids(api, "admin support", entity="react") == [react["id"]]
    assert search_ids(api, "admin support", entity="reactjs") == [react["id"]]
    assert verb["id"] not in search_ids(api, "admin support", entity="React")


def test_briefing_names_the_most_mentioned_entities(api: TestClient) -> None:
    store(api, "Docker builds moved to GitHub Actions", source_agent="n8n")
    store(api, "GitHub Actions caches the Docker layers", source_agent="n8n")
    store(api, "Slack gets the GitHub Actions alerts", source_agent="n8n")

    summary = api.get("/briefing", params={"since": "2000-01-01T00:00:00Z", "agent": "claude-code"}).json()["summary"]
    assert summary["entities_mentioned"] == [
        {"name": "GitHub Actions", "type": "service", "count": 3},
        {"name": "Docker", "type": "technology", "count": 2},
        {"name": "Slack", "type": "service", "count": 1},
    ]


def test_import_keeps_exported_entities_and_links_them(api: TestClient, tmp_path: Path) -> None:
    created = store(api, "Payments run through Stripe and PostgreSQL")
    reclassify(api, ("PostgreSQL", "system"), dry_run=False)
    exported = api.get("/export").json()["memories"]
    original = next(record for record in exported if record["id"] == created["id"])

    settings = Settings(data_dir=tmp_path / "other", api_key=API_KEY, rate_limit_enabled=False,
                        writer_entities=False)
    container = build_container(settings, embedder=HashingEmbedder(), clock=TickingClock())
    try:
        with TestClient(build_embedded_app(settings, container), headers={"x-api-key": API_KEY}) as other:
            response = other.post("/export/import", json={"operator_approved": True, "data": exported})
            assert response.status_code == 200 and response.json()["failed"] == 0, response.text
            assert get(other, created["id"])["entities"] == original["entities"]
            assert entity(other, "PostgreSQL")["type"] == "system"  # as exported, not as the dictionary says
            assert created["id"] in linked_ids(other, "Stripe")
            assert search_ids(other, "payments", entity="stripe") == [created["id"]]
            without = {**original, "id": "imported-without-entities", "content": "Billing moved to Stripe"}
            del without["entities"]
            assert other.post("/export/import", json={"operator_approved": True, "data": [without]}).json()[
                "imported"] == 1
            assert entities_of(other, "imported-without-entities") == [("Stripe", "service")]
    finally:
        container.close()


def test_the_stats_dashboard_has_an_entities_section(api: TestClient) -> None:
    store(api, "Slack alerts for the Docker builds")
    store(api, "Docker images are scanned")

    section = api.get("/stats").json()["entities"]
    assert section["total"] == 2 and section["by_type"] == {"service": 1, "technology": 1}
    assert [(e["name"], e["mention_count"]) for e in section["top_mentioned"]] == [("Docker", 2), ("Slack", 1)]


def test_reindex_and_a_restart_keep_the_entity_filter(settings: Settings, hashing_container: Container,
                                                      api: TestClient) -> None:
    kept = store(api, "Queue consumers run on RabbitMQ")
    store(api, "Queue consumers were rewritten")

    hashing_container.memory.index_sync.reindex()
    assert search_ids(api, "queue consumers", entity="RabbitMQ") == [kept["id"]]

    reopened = build_container(settings, embedder=HashingEmbedder(), clock=TickingClock())
    try:  # a second process on the same files loads the stored entity keys with the vectors
        with TestClient(build_embedded_app(settings, reopened), headers={"x-api-key": API_KEY}) as again:
            assert search_ids(again, "queue consumers", entity="rabbitmq") == [kept["id"]]
    finally:
        reopened.close()


def test_a_person_named_in_content_becomes_a_person_entity(api: TestClient) -> None:
    """Issue 37: no fingerprint lists her, yet the text says who she is."""
    stored = store(api, "Sarah Chen is Initech's CTO", client_id="initech")
    assert ("Sarah Chen", "person") in entities_of(api, stored["id"])
    assert entity(api, "Sarah Chen")["type"] == "person"
    assert linked_ids(api, "Sarah Chen") == [stored["id"]]
