"""Scoped API keys on the embedded app: managing them (/admin/keys), roles, per-key rate budgets, keys never
logged, and what reflect and research show the LLM under a scoped key. The tenant matrix is test_tenant_matrix.py."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import build_container
from zengram.assembly.roles import ROUTE_ROLES
from zengram.chat.api.roles import CHAT_ROUTE_ROLES
from zengram.embedded.app import build_embedded_app
from zengram.kernel.keys import Role
from zengram.settings import Settings

from tests.api.helpers import assert_error, memory
from tests.llm_server import ScriptedLLMServer
from tests.support import API_KEY, HashingEmbedder, ManualClock, TickingClock

SOME_ID = "0b7e3f9a-58f4-4a53-9d3c-0e6a2b1f4c11"


def app_client(settings: Settings, clock: Any = None) -> Iterator[TestClient]:
    container = build_container(settings, embedder=HashingEmbedder(), clock=clock or TickingClock())
    try:
        with TestClient(build_embedded_app(settings, container)) as test_client:
            yield test_client
    finally:
        container.close()


@pytest.fixture
def api(settings: Settings) -> Iterator[TestClient]:
    yield from app_client(settings)


def as_key(key: str) -> dict[str, str]:
    return {"x-api-key": key}


ADMIN = as_key(API_KEY)


def create_key(client: TestClient, expect: int = 201, **body: Any) -> dict[str, Any]:
    response = client.post("/admin/keys", json=body, headers=ADMIN)
    assert response.status_code == expect, response.text
    created: dict[str, Any] = response.json()
    return created


# -- managing keys ----------------------------------------------------------------------------------------------


def test_a_key_is_shown_once_then_listed_without_it(api: TestClient) -> None:
    created = create_key(api, name="acme support agent", role="write", clients=["globex", "acme-corp"])
    key = created.pop("key")

    assert key.startswith(f"zgk_{created['id']}_") and len(key) == 4 + 32 + 1 + 43
    assert created["clients"] == ["acme-corp", "globex"] and created["role"] == "write"
    assert created["revoked_at"] is None and created["name"] == "acme support agent"
    listed = api.get("/admin/keys", headers=ADMIN).json()
    assert listed == {"count": 1, "keys": [created]}
    assert key not in api.get("/admin/keys", headers=ADMIN).text
    assert api.get("/memory/query", params={"type": "facts"}, headers=as_key(key)).status_code == 200


def test_an_admin_key_sees_every_client(api: TestClient) -> None:
    created = create_key(api, name="ops", role="admin")
    assert created["clients"] == "all"
    assert create_key(api, name="ops2", role="admin", clients="all")["clients"] == "all"
    assert api.get("/admin/keys", headers=as_key(created["key"])).json()["count"] == 2


def test_a_revoked_key_is_refused_at_once_and_revoking_again_answers_the_same(api: TestClient) -> None:
    created = create_key(api, name="temp", role="read", clients="all")
    headers = as_key(created["key"])
    assert api.get("/stats", headers=headers).status_code == 200

    revoked = api.delete(f"/admin/keys/{created['id']}", headers=ADMIN)

    assert revoked.status_code == 200 and revoked.json()["revoked"] is True
    assert assert_error(api.get("/stats", headers=headers), 401) == "invalid API key"
    assert api.delete(f"/admin/keys/{created['id']}", headers=ADMIN).json() == revoked.json()
    assert api.get("/admin/keys", headers=ADMIN).json()["keys"][0]["revoked_at"] == revoked.json()["revoked_at"]


@pytest.mark.parametrize("key_id", ["0" * 32, "not-a-key-id", "bootstrap"])
def test_revoking_an_unknown_key_is_a_404(api: TestClient, key_id: str) -> None:
    assert_error(api.delete(f"/admin/keys/{key_id}", headers=ADMIN), 404)


@pytest.mark.parametrize(("body", "field"), [
    ({"role": "write", "clients": ["acme"]}, "name"),
    ({"name": "   ", "role": "write", "clients": ["acme"]}, "name"),
    ({"name": "x", "role": "owner", "clients": ["acme"]}, "role"),
    ({"name": "x", "role": "write"}, "clients"),
    ({"name": "x", "role": "read", "clients": []}, "clients"),
    ({"name": "x", "role": "read", "clients": ["has space"]}, "clients"),
    ({"name": "x", "role": "read", "clients": "everyone"}, "clients"),
    ({"name": "x", "role": "admin", "clients": ["acme"]}, "clients"),
    ({"name": "x", "role": "read", "clients": ["acme"], "key": "zgk_choose_my_own"}, "key"),
])
def test_an_invalid_key_request_is_a_400_naming_the_field(api: TestClient, body: dict[str, Any], field: str) -> None:
    message = assert_error(api.post("/admin/keys", json=body, headers=ADMIN), 400)
    assert message.startswith(f"{field}"), message
    assert api.get("/admin/keys", headers=ADMIN).json()["count"] == 0


@pytest.mark.parametrize("forged", [
    "zgk_" + "0" * 32 + "_" + "A" * 43,  # well-formed, unknown id
    "zgk_short",
    "zgk_" + "0" * 32,
])
def test_forged_keys_are_401(api: TestClient, forged: str) -> None:
    assert assert_error(api.get("/stats", headers=as_key(forged)), 401) == "invalid API key"


def test_a_tampered_secret_is_401(api: TestClient) -> None:
    key = create_key(api, name="acme", role="read", clients=["acme"])["key"]
    last = "A" if key[-1] != "A" else "B"
    assert_error(api.get("/stats", headers=as_key(key[:-1] + last)), 401)
    assert_error(api.get("/stats", headers=as_key(key + "A")), 401)
    assert_error(api.get("/stats", headers=as_key(key.upper())), 401)


def test_the_bootstrap_key_keeps_working_beside_scoped_keys(api: TestClient) -> None:
    create_key(api, name="acme", role="read", clients=["acme"])
    stored = api.post("/memory", json=memory("Globex moved to Fridays", client_id="globex"), headers=ADMIN)
    assert stored.status_code == 201
    assert api.get("/admin/keys", headers=ADMIN).status_code == 200


def test_an_entity_of_another_client_shows_none_of_its_fingerprint(api: TestClient) -> None:
    api.put("/clients/globex", json={"name": "Globex Corporation", "aliases": ["Globex", "Hooli East"]}, headers=ADMIN)
    api.post("/memory", json=memory("Acme met Globex about the merger", client_id="acme"), headers=ADMIN)
    key = create_key(api, name="acme", role="read", clients=["acme"])["key"]

    seen_by_acme = api.get("/entities/globex", headers=as_key(key))
    seen_by_admin = api.get("/entities/globex", headers=ADMIN)

    # Named in acme's memory by the admin, but another tenant's client id is not shown to acme's key at all.
    assert_error(seen_by_acme, 404)
    assert_error(api.get("/entities/Hooli East", headers=as_key(key)), 404)
    assert "Hooli East" in seen_by_admin.json()["aliases"]


# -- roles ------------------------------------------------------------------------------------------------------

# One call per route, inside the key's own client, so only the role can refuse it.
CALLS: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/memory"): {"path": "/memory", "json": memory("Acme note", client_id="acme")},
    ("GET", "/memory/search"): {"path": "/memory/search", "params": {"q": "note"}},
    ("GET", "/memory/query"): {"path": "/memory/query", "params": {"type": "events"}},
    ("GET", "/memory/{memory_id}"): {"path": "/memory/{acme_id}"},
    ("GET", "/memory/{memory_id}/history"): {"path": "/memory/{acme_id}/history"},
    ("PATCH", "/memory/{memory_id}"): {"path": "/memory/{acme_id}", "json": {"importance": "high"}},
    ("DELETE", "/memory/{memory_id}"): {"path": "/memory/{acme_id}"},
    ("POST", "/memory/{memory_id}/restore"): {"path": "/memory/{acme_id}/restore"},
    ("GET", "/briefing"): {"path": "/briefing", "params": {"since": "2026-01-01T00:00:00Z"}},
    ("GET", "/stats"): {"path": "/stats"},
    ("GET", "/export"): {"path": "/export"},
    ("POST", "/export/import"): {"path": "/export/import", "json": {"operator_approved": True, "data": [
        {"type": "event", "content": "Imported Acme note", "source_agent": "import", "client_id": "acme"}]}},
    ("GET", "/entities"): {"path": "/entities"},
    ("GET", "/entities/stats"): {"path": "/entities/stats"},
    ("GET", "/entities/graph"): {"path": "/entities/graph"},
    ("GET", "/entities/{name}"): {"path": "/entities/PostgreSQL"},
    ("GET", "/entities/{name}/memories"): {"path": "/entities/PostgreSQL/memories"},
    ("POST", "/entities/reclassify"): {"path": "/entities/reclassify", "json": {
        "reclassifications": [{"name": "PostgreSQL", "new_type": "system"}]}},
    ("DELETE", "/entities/{name}"): {"path": "/entities/Nonexistium"},
    ("POST", "/entities/{name}/merge"): {"path": "/entities/PostgreSQL/merge", "json": {"merge_from": "Nonexistium"}},
    ("GET", "/collections"): {"path": "/collections"},
    ("POST", "/collections"): {"path": "/collections", "json": {"name": "research"}},
    ("GET", "/collections/{name}"): {"path": "/collections/shared_memories"},
    ("DELETE", "/collections/{name}"): {"path": "/collections/nope", "params": {"operator_approved": "true"}},
    ("GET", "/clients"): {"path": "/clients"},
    ("GET", "/clients/{client_id}"): {"path": "/clients/acme"},
    ("PUT", "/clients/{client_id}"): {"path": "/clients/acme", "json": {"name": "Acme"}},
    ("DELETE", "/clients/{client_id}"): {"path": "/clients/acme"},
    ("POST", "/reflect"): {"path": "/reflect", "json": {"topic": "note"}},
    ("POST", "/research"): {"path": "/research", "json": {"topic": "note"}},
    ("POST", "/consolidate"): {"path": "/consolidate"},
    ("GET", "/consolidate/job/{job_id}"): {"path": "/consolidate/job/nope"},
    ("GET", "/consolidate/status"): {"path": "/consolidate/status"},
    ("POST", "/admin/keys"): {"path": "/admin/keys", "json": {"name": "n", "role": "read", "clients": ["acme"]}},
    ("GET", "/admin/keys"): {"path": "/admin/keys"},
    ("DELETE", "/admin/keys/{key_id}"): {"path": "/admin/keys/" + "0" * 32},
    ("GET", "/kb/health/status"): {"path": "/kb/health/status"},
    ("GET", "/kb/query/count"): {"path": "/kb/query/count"},
    ("GET", "/kb/query/chunk/{chunk_id}"): {"path": "/kb/query/chunk/nope"},
    ("GET", "/kb/health/providers"): {"path": "/kb/health/providers"},
    ("GET", "/kb/index/cache"): {"path": "/kb/index/cache"},
    ("DELETE", "/kb/index/cache"): {"path": "/kb/index/cache"},
    ("GET", "/kb/health/config"): {"path": "/kb/health/config"},
    ("GET", "/kb/graph/entity/{entity_type}/{entity_id}"): {"path": "/kb/graph/entity/Class/Nope"},
    ("POST", "/kb/graph/project"): {"path": "/kb/graph/project", "json": {"source_tag": "docs"}},
    ("DELETE", "/kb/graph/project"): {"path": "/kb/graph/project?source_tag=docs"},
    ("POST", "/kb/query"): {"path": "/kb/query", "json": {"query": "note"}},
    ("GET", "/kb/index/jobs"): {"path": "/kb/index/jobs"},
    ("GET", "/kb/index/jobs/{job_id}"): {"path": "/kb/index/jobs/nope"},
    ("GET", "/kb/index/folders"): {"path": "/kb/index/folders"},
    ("POST", "/kb/index"): {"path": "/kb/index", "json": {"folder_path": "/outside/every/root"}},
    ("POST", "/kb/index/add"): {"path": "/kb/index/add/", "json": {"folder_path": "/outside/every/root"}},
    ("DELETE", "/kb/index/jobs/{job_id}"): {"path": "/kb/index/jobs/nope"},
    ("DELETE", "/kb/index/folders"): {"path": "/kb/index/folders", "json": {"folder_path": "not-indexed"}},
    ("DELETE", "/kb/index"): {"path": "/kb/index/"},
}


@pytest.fixture
def role_world(api: TestClient) -> dict[str, Any]:
    # `global` too: the document knowledge base is shared knowledge, so only the role decides there as well.
    keys = {role: create_key(api, name=role, role=role, clients=None if role == "admin" else ["acme", "global"])["key"]
            for role in ("read", "write", "admin")}
    api.put("/clients/acme", json={"name": "Acme"}, headers=ADMIN)
    acme_id = api.post("/memory", json=memory("Acme runs PostgreSQL", client_id="acme"), headers=ADMIN).json()["id"]
    return {"keys": keys, "acme_id": acme_id}


def test_every_route_has_a_role_call() -> None:
    """The memory API's routes; the chat layer's (/api/v1) are checked below."""
    assert set(CALLS) == set(ROUTE_ROLES) - set(CHAT_ROUTE_ROLES)


def test_a_read_key_reads_the_chat_layer_and_writes_nothing_there(api: TestClient,
                                                                  role_world: dict[str, Any]) -> None:
    assert {role for route, role in ROUTE_ROLES.items() if route in CHAT_ROUTE_ROLES} == {Role.READ, Role.WRITE}
    reader = {"x-mnexium-key": role_world["keys"]["read"], "x-mnx-project-id": "acme"}
    assert api.get("/api/v1/memories", params={"subject_id": "alice"}, headers=reader).status_code == 200
    refused = api.post("/api/v1/memories", json={"subject_id": "alice", "text": "Alice likes tea"}, headers=reader)
    assert assert_error(refused, 403).startswith("role:")


@pytest.mark.parametrize("role", ["read", "write", "admin"])
def test_each_role_calls_exactly_the_routes_it_includes(api: TestClient, role_world: dict[str, Any],
                                                        role: str) -> None:
    refused, let_through = [], []
    for (method, route), call in CALLS.items():
        path = call["path"].replace("{acme_id}", role_world["acme_id"])
        response = api.request(method, path, headers=as_key(role_world["keys"][role]),
                               **{k: v for k, v in call.items() if k != "path"})
        if response.status_code == 403 and response.json()["error"].startswith("role:"):
            refused.append((method, route))
        else:
            let_through.append((method, route))
    needed = {route: ROUTE_ROLES[route] for route in CALLS}
    assert sorted(refused) == sorted(route for route, role_needed in needed.items()
                                     if not Role(role).includes(role_needed))
    if role == "read":
        assert ("POST", "/memory") in refused and ("GET", "/memory/search") in let_through
    if role == "write":
        assert ("POST", "/memory") in let_through and ("GET", "/admin/keys") in refused


def test_a_read_key_changes_nothing(api: TestClient, role_world: dict[str, Any]) -> None:
    reader = as_key(role_world["keys"]["read"])
    memory_id = role_world["acme_id"]
    before = api.get(f"/memory/{memory_id}", headers=ADMIN).json()
    assert_error(api.patch(f"/memory/{memory_id}", json={"content": "changed"}, headers=reader), 403)
    assert_error(api.delete(f"/memory/{memory_id}", headers=reader), 403)
    assert_error(api.post("/memory", json=memory("Acme new note", client_id="acme"), headers=reader), 403)
    assert api.get(f"/memory/{memory_id}", headers=ADMIN).json() == before
    assert api.get("/memory/query", params={"type": "events"}, headers=ADMIN).json()["count"] == 1


# -- rate limits: each key its own budget -------------------------------------------------------------------------


def test_each_key_is_limited_on_its_own_budget(settings: Settings) -> None:
    limited = settings.model_copy(update={"rate_limit_enabled": True, "rate_limit_writes_per_minute": 3,
                                          "rate_limit_reads_per_minute": 100})
    for api in app_client(limited, ManualClock()):
        keys = [create_key(api, name=f"agent-{n}", role="write", clients=["acme"])["key"] for n in range(2)]
        first, second = as_key(keys[0]), as_key(keys[1])
        statuses = [api.post("/memory", json=memory(f"Acme note {n}", client_id="acme"), headers=first).status_code
                    for n in range(4)]
        assert statuses == [201, 201, 201, 429]
        assert api.post("/memory", json=memory("Acme other", client_id="acme"), headers=second).status_code == 201
        # The bootstrap key spent 2 writes minting the keys: 1 left, then its own 429.
        assert api.post("/memory", json=memory("Acme admin", client_id="acme"), headers=ADMIN).status_code == 201
        assert_error(api.post("/memory", json=memory("Acme admin 2", client_id="acme"), headers=ADMIN), 429)


# -- keys are never logged ------------------------------------------------------------------------------------------


def test_no_key_reaches_the_logs(api: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    created = create_key(api, name="acme", role="write", clients=["acme"])
    key = created["key"]
    headers = as_key(key)
    api.post("/memory", json=memory("Acme note", client_id="acme"), headers=headers)
    api.get("/memory/search", params={"q": "note"}, headers=headers)
    api.get("/stats", headers=as_key(key + "x"))  # refused
    api.get("/memory/search", params={"q": "x", "client_id": "globex"}, headers=headers)  # forbidden
    api.post("/admin/keys", json={"name": "x", "role": "read"}, headers=headers)  # forbidden (role)
    api.delete(f"/admin/keys/{created['id']}", headers=ADMIN)
    api.get("/stats", headers=headers)  # revoked

    secret = key.split("_", 2)[2]
    assert caplog.records, "expected some log lines to look through"
    for text in (record.getMessage() + repr(record.args) + str(record.__dict__) for record in caplog.records):
        assert secret not in text and API_KEY not in text


def test_an_unexpected_failure_under_a_scoped_key_logs_no_key(
    settings: Settings, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    container = build_container(settings, embedder=HashingEmbedder(), clock=TickingClock())
    try:
        app = build_embedded_app(settings, container)
        with TestClient(app, raise_server_exceptions=False) as api:
            key = create_key(api, name="acme", role="read", clients=["acme"])["key"]

            def fail(*_: object, **__: object) -> None:
                raise RuntimeError("disk on fire")

            monkeypatch.setattr(container.memory, "query", fail)
            caplog.set_level(logging.DEBUG)
            response = api.get("/memory/query", params={"type": "facts"}, headers=as_key(key))
    finally:
        container.close()
    assert response.status_code == 500
    assert any("unhandled error" in record.getMessage() for record in caplog.records)
    assert not any(key.split("_", 2)[2] in record.getMessage() + str(record.exc_info) for record in caplog.records)


# -- reflect and research under a scoped key: the LLM sees the key's memories only --------------------------------


@pytest.fixture
def llm_api(llm_settings: Settings) -> Iterator[TestClient]:
    yield from app_client(llm_settings.model_copy(update={"research_enabled": True}))


def seed_two_tenants(api: TestClient) -> dict[str, str]:
    return {client: api.post("/memory", json=memory(f"The {client} cache was replaced by CDN headers",
                                                    client_id=client), headers=ADMIN).json()["id"]
            for client in ("acme", "globex")}


def prompts(server: ScriptedLLMServer) -> str:
    return "\n".join(message["content"] for request in server.requests for message in request["messages"])


def test_reflect_under_a_scoped_key_shows_the_llm_its_memories_only(llm_api: TestClient,
                                                                   llm_server: ScriptedLLMServer) -> None:
    ids = seed_two_tenants(llm_api)
    key = create_key(llm_api, name="acme", role="read", clients=["acme"])["key"]
    llm_server.script({"summary": f"Replaced [mem:{ids['acme']}] [mem:{ids['globex']}]", "patterns": [],
                       "timeline": [], "contradictions": [], "gaps": []})

    response = llm_api.post("/reflect", json={"topic": "cache replaced"}, headers=as_key(key))

    assert response.status_code == 200, response.text
    assert response.json()["cited_memory_ids"] == [ids["acme"]]  # the other tenant's id was stripped
    assert ids["acme"] in prompts(llm_server) and ids["globex"] not in prompts(llm_server)


def test_research_under_a_scoped_key_retrieves_its_memories_only(llm_api: TestClient,
                                                                 llm_server: ScriptedLLMServer) -> None:
    ids = seed_two_tenants(llm_api)
    key = create_key(llm_api, name="globex", role="read", clients=["globex"])["key"]
    llm_server.script({"draft": "d", "status": "SUFFICIENT", "reason": "r", "missing": []},
                      {"answer": f"Replaced [mem:{ids['globex']}]", "key_findings": [], "unresolved": []})

    response = llm_api.post("/research", json={"topic": "cache replaced"}, headers=as_key(key))

    assert response.status_code == 200, response.text
    assert response.json()["cited_memory_ids"] == [ids["globex"]]
    assert ids["globex"] in prompts(llm_server) and ids["acme"] not in prompts(llm_server)
