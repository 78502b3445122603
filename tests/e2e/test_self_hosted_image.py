"""The self-hosting image (infra/containers/Containerfile), built with podman on the locally built Lambda base and
run with its data on a named volume: what was stored survives `podman restart` and a new container on the same
volume, every memory readable by id and found by search, the API key from the environment enforced throughout."""

from __future__ import annotations

import secrets

import httpx
import pytest

from infra.containers.selfhosted import build_image
from tests.e2e.containers import (
    RunningContainer,
    docker_host,  # noqa: F401 - fixtures used by name
    lambda_base_image,  # noqa: F401
    podman,
    podman_volume,  # noqa: F401
    published_url,
    run_container,
    wait_healthy,
)

pytestmark = [pytest.mark.timeout(1500), pytest.mark.xdist_group("containers")]

TAG = "localhost/zengram-selfhosted:test"
PORT = 8084
# Distinct topics, so each is the best hit for its own words; every memory type the API stores.
MEMORIES = [
    {"type": "event", "content": "The team migrated the billing service to the new Postgres cluster on Tuesday"},
    {"type": "event", "content": "A thunderstorm knocked out power at the Lisbon office for three hours"},
    {"type": "event", "content": "Priya presented the quarterly roadmap for the mobile app to the board"},
    {"type": "fact", "content": "The staging API gateway rate limit is 250 requests per second", "key": "staging-rps"},
    {"type": "fact", "content": "Our on-call rotation hands over every Monday at nine in the morning"},
    {"type": "fact", "content": "The ornithology dataset lists forty-two species of penguins and petrels"},
    {"type": "decision", "content": "We chose Rust for the image thumbnailer because of its memory safety"},
    {"type": "decision", "content": "Customer invoices will be archived after seven years, then deleted"},
    {"type": "status", "content": "The documentation site rebuild is blocked on the search plugin upgrade",
     "subject": "docs-site", "status_value": "blocked"},
    {"type": "event", "content": "The espresso machine on the fourth floor was descaled and works again"},
]
QUERIES = [
    "billing service Postgres migration", "Lisbon office power outage thunderstorm",
    "mobile app quarterly roadmap", "staging gateway rate limit requests per second",
    "on-call rotation handover Monday", "penguins and petrels species", "Rust thumbnailer memory safety",
    "invoices archived seven years", "documentation site blocked search plugin", "espresso machine descaled",
]
KEPT_FIELDS = ("id", "type", "content", "content_hash", "source_agent", "created_at", "key", "subject", "status_value")


@pytest.fixture(scope="module")
def image(lambda_base_image: str) -> str:  # noqa: F811
    return build_image(base=lambda_base_image, tag=TAG)


def store_all(client: httpx.Client) -> dict[str, dict[str, object]]:
    stored = {}
    for memory in MEMORIES:
        response = client.post("/memory", json={**memory, "source_agent": "e2e-selfhosted"})
        assert response.status_code == 201, response.text
        assert response.json()["stored_in"] == {"vector": True, "structured_db": True}
        memory_id = response.json()["id"]
        stored[memory_id] = kept(client.get(f"/memory/{memory_id}").json())
    return stored


def kept(record: dict[str, object]) -> dict[str, object]:
    return {field: record.get(field) for field in KEPT_FIELDS}


def assert_nothing_lost(container: RunningContainer, key: str, stored: dict[str, dict[str, object]]) -> None:
    with httpx.Client(base_url=container.url, headers={"x-api-key": key}, timeout=60) as client:
        for memory_id, record in stored.items():
            response = client.get(f"/memory/{memory_id}")
            assert response.status_code == 200, response.text
            assert kept(response.json()) == record
        for memory_id, query in zip(stored, QUERIES, strict=True):
            response = client.get("/memory/search", params={"q": query, "limit": 5, "format": "index"})
            assert response.status_code == 200, response.text
            found = [hit["id"] for hit in response.json()["results"]]
            assert found and found[0] == memory_id, (query, found)
        export = client.get("/export", params={"limit": 100})
        assert export.status_code == 200 and export.json()["total"] == len(stored), export.text
        assert client.get("/memory/search", params={"q": "penguins"}, headers={"x-api-key": "wrong"}
                          ).status_code == 401


def test_memories_survive_restart_and_a_new_container(image: str, podman_volume: str) -> None:  # noqa: F811
    key = secrets.token_urlsafe(24)
    env = {"BRAIN_API_KEY": key}
    first = run_container(image, f"{podman_volume}-a", port=PORT, volumes={podman_volume: "/data"}, env=env)
    wait_healthy(first)
    with httpx.Client(base_url=first.url, timeout=60) as client:
        assert client.get("/memory/search", params={"q": "penguins"}).status_code == 401  # no key
        client.headers["x-api-key"] = key
        stored = store_all(client)
    assert len(stored) == len(MEMORIES)
    assert_nothing_lost(first, key, stored)

    podman("restart", "-t", "20", first.name)
    restarted = RunningContainer(first.name, published_url(first.name, PORT))
    wait_healthy(restarted)
    assert_nothing_lost(restarted, key, stored)

    podman("stop", "-t", "20", first.name)
    podman("rm", first.name)
    second = run_container(image, f"{podman_volume}-b", port=PORT, volumes={podman_volume: "/data"}, env=env)
    wait_healthy(second)
    assert_nothing_lost(second, key, stored)
