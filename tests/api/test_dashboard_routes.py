"""What the web dashboard added to the API: GET /memory/{id}/history, GET /entities/graph, the last job in the
consolidation status, and the static files at /dashboard/ (served without a key; the API keeps its check)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import Container
from zengram.embedded.app import build_embedded_app
from zengram.settings import Settings
from zengram.web.middleware import ApiKeyMiddleware

from tests.api.helpers import TIMESTAMP, assert_error, get, store
from tests.support import API_KEY


@pytest.fixture
def api(settings: Settings, hashing_container: Container) -> Iterator[TestClient]:
    with TestClient(build_embedded_app(settings, hashing_container), headers={"x-api-key": API_KEY}) as client:
        yield client


def history(client: TestClient, memory_id: str, **headers: str) -> dict[str, Any]:
    response = client.get(f"/memory/{memory_id}/history", headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def scoped_key(client: TestClient, clients: list[str]) -> str:
    created = client.post("/admin/keys", json={"name": "reader", "role": "read", "clients": clients})
    assert created.status_code == 201, created.text
    key: str = created.json()["key"]
    return key


# -- GET /memory/{id}/history ------------------------------------------------------------------------------------


def test_history_walks_the_supersede_chain_from_any_version(api: TestClient) -> None:
    ids = [store(api, f"Acme's database is {name}", type="fact", key="acme-db", client_id="acme")["id"]
           for name in ("MySQL", "PostgreSQL 15", "PostgreSQL 16")]

    for memory_id in ids:
        body = history(api, memory_id)
        assert body["id"] == memory_id and body["memory"] == get(api, memory_id)
        assert [link["id"] for link in body["chain"]] == ids
        assert [link["active"] for link in body["chain"]] == [False, False, True]
    middle = history(api, ids[1])
    assert middle["chain"][1]["content"] == "Acme's database is PostgreSQL 15"
    assert middle["chain"][1]["supersedes"] == ids[0] and middle["chain"][1]["superseded_by"] == ids[2]
    kinds = [(event["kind"], event["memory_id"]) for event in middle["events"]]
    assert kinds == [("created", ids[0]), ("superseded", ids[0]), ("created", ids[1]), ("superseded", ids[1]),
                     ("created", ids[2])]
    assert all(TIMESTAMP.match(event["at"]) for event in middle["events"])


def test_history_shows_corroboration_and_accesses_and_reading_it_is_no_access(api: TestClient) -> None:
    content = "Globex renews its contract in May"
    memory_id = store(api, content, type="fact", key="renewal", client_id="globex")["id"]
    store(api, content, expect=200, type="fact", key="renewal", client_id="globex", source_agent="review-bot")
    for _ in range(2):
        assert api.get("/memory/search", params={"q": "Globex contract renewal"}).status_code == 200

    body = history(api, memory_id)
    history(api, memory_id)

    assert body["corroboration"] == {"source_agent": "claude-code", "observed_by": ["claude-code", "review-bot"],
                                     "observation_count": 2,
                                     "last_observed_at": body["corroboration"]["last_observed_at"]}
    assert body["access"]["access_count"] == 2 and TIMESTAMP.match(body["access"]["last_accessed_at"])
    assert [event["kind"] for event in body["events"]] == ["created", "corroborated", "accessed"]
    assert get(api, memory_id)["access_count"] == 2  # the history reads were not counted


def test_history_curve_decays_for_facts_only(api: TestClient) -> None:
    fact = history(api, store(api, "Acme's SLA is 99.9%", type="fact", key="sla", client_id="acme")["id"])
    event = history(api, store(api, "Acme signed the SLA", client_id="acme")["id"])

    assert fact["decay"]["decays"] and not event["decay"]["decays"]
    assert fact["decay"]["factor"] == 0.98
    for body in (fact, event):
        curve = body["decay"]["curve"]
        assert len(curve) >= 48 and curve[0]["projected"] is False and curve[-1]["projected"] is True
        assert [point["at"] for point in curve] == sorted(point["at"] for point in curve)
    assert fact["decay"]["curve"][-1]["confidence"] < 0.6 < fact["decay"]["curve"][0]["confidence"]  # 30 days on
    assert {point["confidence"] for point in event["decay"]["curve"]} == {1.0}


def test_history_of_an_unknown_memory_is_a_404(api: TestClient) -> None:
    assert_error(api.get("/memory/0b7e3f9a-58f4-4a53-9d3c-0e6a2b1f4c11/history"), 404)


def test_a_scoped_key_sees_the_history_of_its_own_clients_only(api: TestClient) -> None:
    acme = store(api, "Acme moved to Kafka", client_id="acme")["id"]
    globex = store(api, "Globex moved to Kafka", client_id="globex")["id"]
    key = scoped_key(api, ["acme"])

    assert history(api, acme, **{"x-api-key": key})["id"] == acme
    assert_error(api.get(f"/memory/{globex}/history", headers={"x-api-key": key}), 403)


# -- GET /entities/graph ------------------------------------------------------------------------------------------


def graph(client: TestClient, key: str = API_KEY, **params: Any) -> dict[str, Any]:
    response = client.get("/entities/graph", params=params, headers={"x-api-key": key})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["node_count"] == len(body["nodes"]) and body["edge_count"] == len(body["edges"])
    return body


def edges_by_name(body: dict[str, Any]) -> dict[frozenset[str], int]:
    names = {node["id"]: node["canonical_name"] for node in body["nodes"]}
    return {frozenset((names[edge["source"]], names[edge["target"]])): edge["strength"] for edge in body["edges"]}


@pytest.fixture
def stack_memories(api: TestClient) -> None:
    store(api, "Acme runs PostgreSQL behind Kafka", client_id="acme")
    store(api, "Acme tuned PostgreSQL and Kafka retention", client_id="acme")
    store(api, "Acme added Redis in front of PostgreSQL", client_id="acme")
    store(api, "Globex pays through Stripe", client_id="globex")


@pytest.mark.usefixtures("stack_memories")
def test_the_graph_has_the_most_mentioned_entities_and_their_co_occurrence(api: TestClient) -> None:
    body = graph(api)

    nodes = {node["canonical_name"]: node for node in body["nodes"]}
    assert {"PostgreSQL", "Kafka", "Redis", "Stripe"} <= set(nodes)
    assert nodes["PostgreSQL"] | {"first_seen": None, "last_seen": None} == {
        "id": "postgresql", "canonical_name": "PostgreSQL", "entity_type": "technology", "mention_count": 3,
        "first_seen": None, "last_seen": None}
    counts = [node["mention_count"] for node in body["nodes"]]
    assert counts == sorted(counts, reverse=True)
    edges = edges_by_name(body)
    assert edges[frozenset(("PostgreSQL", "Kafka"))] == 2
    assert edges[frozenset(("PostgreSQL", "Redis"))] == 1
    assert frozenset(("PostgreSQL", "Stripe")) not in edges  # never named together
    assert all(edge["source"] < edge["target"] for edge in body["edges"])
    strengths = [edge["strength"] for edge in body["edges"]]
    assert strengths == sorted(strengths, reverse=True)


@pytest.mark.usefixtures("stack_memories")
def test_the_graph_filters_by_type_size_and_strength(api: TestClient) -> None:
    services = graph(api, type="service")
    assert [node["canonical_name"] for node in services["nodes"]] == ["Stripe"] and services["type"] == "service"

    strong = graph(api, min_strength=2)
    assert edges_by_name(strong) and min(edges_by_name(strong).values()) >= 2  # (the writer's client and agent too)
    assert frozenset(("PostgreSQL", "Kafka")) in edges_by_name(strong)

    top_two = graph(api, limit=2)
    assert top_two["node_count"] == 2
    kept = {node["id"] for node in top_two["nodes"]}
    assert all({edge["source"], edge["target"]} <= kept for edge in top_two["edges"])


@pytest.mark.parametrize(("params", "field"), [({"limit": 0}, "limit"), ({"limit": 201}, "limit"),
                                               ({"min_strength": 0}, "min_strength"), ({"type": "planet"}, "type")])
def test_bad_graph_parameters_are_a_400_naming_the_field(api: TestClient, params: dict[str, Any], field: str) -> None:
    assert_error(api.get("/entities/graph", params=params), 400, field)


@pytest.mark.usefixtures("stack_memories")
def test_a_scoped_key_gets_the_graph_of_its_own_memories(api: TestClient) -> None:
    store(api, "Globex runs PostgreSQL with Stripe billing", client_id="globex")
    acme = graph(api, scoped_key(api, ["acme"]))
    everyone = graph(api)

    assert "Stripe" not in {node["canonical_name"] for node in acme["nodes"]}
    assert frozenset(("PostgreSQL", "Stripe")) in edges_by_name(everyone)
    assert next(n for n in acme["nodes"] if n["canonical_name"] == "PostgreSQL")["mention_count"] == 3
    assert next(n for n in everyone["nodes"] if n["canonical_name"] == "PostgreSQL")["mention_count"] == 4
    assert edges_by_name(acme)[frozenset(("PostgreSQL", "Kafka"))] == 2


# -- consolidation status ---------------------------------------------------------------------------------------


def test_the_status_names_no_job_before_any_run(api: TestClient) -> None:
    body = api.get("/consolidate/status").json()
    assert "last_job_id" in body and body["last_job_id"] is None


# -- the static files -------------------------------------------------------------------------------------------


def test_the_dashboard_is_served_without_a_key(api: TestClient) -> None:
    page = api.get("/dashboard/", headers={"x-api-key": ""})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="js/app.js">' in page.text
    script = api.get("/dashboard/js/app.js", headers={"x-api-key": ""})
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    moved = api.get("/dashboard", headers={"x-api-key": ""}, follow_redirects=False)
    assert moved.status_code == 307 and moved.headers["location"] == "/dashboard/"


@pytest.mark.parametrize("path", ["/stats", "/dashboard/../stats", "/dashboardx", "/memory/search?q=x"])
def test_the_api_still_needs_its_key(api: TestClient, path: str) -> None:
    assert_error(api.get(path, headers={"x-api-key": ""}), 401)


def test_the_dashboard_is_not_an_api_route(api: TestClient) -> None:
    paths = api.get("/openapi.json").json()["paths"]
    assert not [path for path in paths if path.startswith("/dashboard")]


@pytest.mark.parametrize(("path", "open_"), [
    ("/health", True), ("/dashboard", True), ("/dashboard/", True), ("/dashboard/js/app.js", True),
    ("/dashboard/../stats", False), ("/dashboard/js/../../admin/keys", False), ("/dashboardx", False),
    ("/stats", False), ("/", False)])
def test_only_paths_inside_the_open_prefix_skip_the_key_check(path: str, open_: bool) -> None:
    middleware = ApiKeyMiddleware(app=None, authenticate=lambda key: None,  # type: ignore[arg-type]
                                  open_prefixes=("/dashboard",))
    assert middleware.is_open(path) is open_
