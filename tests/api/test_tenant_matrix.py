"""The tenant matrix: every route, called by two scoped keys of different clients and by the bootstrap admin key.

- `acme` is a write key for two clients (acme-corp, acme-labs), `globex` a write key for one (globex); `admin` is
  BRAIN_API_KEY. Memories live in acme-corp, acme-labs, globex, initech and global.
- A read without client_id is limited to the caller's clients (exactly: every one of them shows, no other);
  a client_id outside them is a 403; a memory of another tenant, by id, is a 403 and stays unchanged.
- `test_the_matrix_covers_every_route` keeps the matrix complete: a new route without a row fails it.

The app is shared by the module (each check either refuses, which changes nothing, or writes inside the caller's
own clients, which keeps every expectation below true).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import build_container
from zengram.assembly.roles import ROUTE_ROLES
from zengram.embedded.app import build_embedded_app
from zengram.kernel.keys import Role
from zengram.settings import Settings

from tests.api.helpers import assert_error, memory
from tests.support import API_KEY, HashingEmbedder, TickingClock

ALL = {"acme-corp", "acme-labs", "globex", "initech", "global"}
SCOPES = {"acme": {"acme-corp", "acme-labs"}, "globex": {"globex"}, "admin": ALL}
CALLERS = list(SCOPES)
# An entity only one client's memories name; PostgreSQL is named by all of them.
DISTINCT = {"acme-corp": "Django", "acme-labs": "Flask", "globex": "Laravel", "initech": "Cassandra",
            "global": "MongoDB"}
FINGERPRINTS = {"acme-corp": "Acme", "globex": "Globex", "initech": "Initech"}
SINCE = "2026-01-01T00:00:00Z"


@dataclass
class World:
    client: TestClient
    keys: dict[str, str]
    facts: dict[str, str] = field(default_factory=dict)  # client_id → id of its active fact
    events: dict[str, str] = field(default_factory=dict)  # client_id → id of its event
    chat_layer: Any = None  # the container's chat layer, to seed what the API cannot make here (history)

    def call(self, caller: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self.client.request(method, path, headers={"x-api-key": self.keys[caller]}, **kwargs)

    def admin(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self.call("admin", method, path, **kwargs)

    def new_memory(self, client_id: str, content: str, **fields: Any) -> str:
        response = self.admin("POST", "/memory", json=memory(content, client_id=client_id, **fields))
        assert response.status_code == 201, response.text
        memory_id: str = response.json()["id"]
        return memory_id


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    settings = Settings(data_dir=Path(tmp_path_factory.mktemp("tenants")) / "data", api_key=API_KEY,
                        rate_limit_enabled=False, research_enabled=True, llm_base_url=None, llm_api_key=None,
                        llm_api_key_secret_id=None, chat_events_window_seconds=0.2)  # each event stream ends
    container = build_container(settings, embedder=HashingEmbedder(), clock=TickingClock())
    try:
        with TestClient(build_embedded_app(settings, container)) as client:
            keys = {"admin": API_KEY}
            built = World(client, keys)
            for client_id, name in FINGERPRINTS.items():
                assert built.admin("PUT", f"/clients/{client_id}", json={"name": name, "aliases": [name]}).is_success
            for caller, clients in [("acme", ["acme-corp", "acme-labs"]), ("globex", ["globex"])]:
                created = built.admin("POST", "/admin/keys", json={"name": caller, "role": "write", "clients": clients})
                assert created.status_code == 201, created.text
                keys[caller] = created.json()["key"]
            for client_id, entity in sorted(DISTINCT.items()):
                built.facts[client_id] = built.new_memory(
                    client_id, f"{client_id} deployment runs PostgreSQL and {entity}", type="fact", key="stack")
                built.events[client_id] = built.new_memory(client_id, f"{client_id} deployment incident on PostgreSQL")
            built.chat_layer = container.chat
            seed_chat_projects(built)
            yield built
    finally:
        container.close()


def other_client(caller: str) -> str:
    return "acme-corp" if caller == "globex" else "globex"


def allowed(caller: str, client_id: str) -> bool:
    return client_id in SCOPES[caller]


# -- how each route answers each caller ------------------------------------------------------------------------

Check = Callable[[World, str], None]
MATRIX: dict[tuple[str, str], Check] = {}


def row(method: str, route: str) -> Callable[[Check], Check]:
    def register(check: Check) -> Check:
        MATRIX[(method, route)] = check
        return check
    return register


def limited_read(method: str, route: str, path: str, params: dict[str, Any],
                 clients_of: Callable[[dict[str, Any]], set[str]]) -> None:
    """A read that lists memories: without client_id, exactly the caller's clients; another's is a 403 (the admin
    gets it); one of its own, only that one."""

    def check(world: World, caller: str) -> None:
        response = world.call(caller, method, path, params=params)
        assert response.status_code == 200, response.text
        assert clients_of(response.json()) == SCOPES[caller]
        other = world.call(caller, method, path, params={**params, "client_id": other_client(caller)})
        if caller == "admin":
            assert other.status_code == 200 and clients_of(other.json()) == {"globex"}
        else:
            assert "client_id:" in assert_error(other, 403)
        own = sorted(SCOPES[caller])[0]
        narrowed = world.call(caller, method, path, params={**params, "client_id": own})
        assert narrowed.status_code == 200 and clients_of(narrowed.json()) == {own}

    MATRIX[(method, route)] = check


def clients_in(records: list[dict[str, Any]]) -> set[str]:
    return {record["client_id"] for record in records}


limited_read("GET", "/memory/search", "/memory/search", {"q": "deployment", "limit": 100, "format": "full"},
             lambda body: clients_in(body["results"]))
limited_read("GET", "/memory/query", "/memory/query", {"type": "events", "limit": 500},
             lambda body: clients_in(body["results"]))
limited_read("GET", "/briefing", "/briefing", {"since": SINCE, "include": "all", "format": "full", "limit": 500},
             lambda body: clients_in([entry for bucket in ("events", "facts_updated", "status_changes", "decisions")
                                      for entry in body.get(bucket, [])]) | set(body["summary"]["clients_mentioned"]))
limited_read("GET", "/export", "/export", {"active_only": "false"}, lambda body: clients_in(body["memories"]))
limited_read("GET", "/entities/{name}/memories", "/entities/PostgreSQL/memories", {"limit": 100},
             lambda body: clients_in(body["memories"]))


def own_and_foreign_memory(method: str, route: str, *, read: bool = False,
                           prepare: Callable[[World, str], str] | None = None,
                           **kwargs: Any) -> None:
    """A route on one memory: the caller may use it on its own clients' memories (200), a 403 on another's,
    which stays as it was."""

    def check(world: World, caller: str) -> None:
        for client_id in ("acme-corp", "globex"):
            fresh = f"{client_id} note {uuid.uuid4()}"
            memory_id = (prepare(world, client_id) if prepare else
                         world.events[client_id] if read else world.new_memory(client_id, fresh))
            before = world.admin("GET", f"/memory/{memory_id}").json()
            response = world.call(caller, method, route.replace("{memory_id}", memory_id), **kwargs)
            if allowed(caller, client_id):
                assert response.status_code == 200, response.text
            else:
                assert_error(response, 403)
                assert world.admin("GET", f"/memory/{memory_id}").json() == before

    MATRIX[(method, route)] = check


def superseded_fact(world: World, client_id: str) -> str:
    key = f"plan-{uuid.uuid4().hex[:8]}"
    old = world.new_memory(client_id, f"{client_id} old {key}", type="fact", key=key)
    world.new_memory(client_id, f"{client_id} new {key}", type="fact", key=key)
    return old


own_and_foreign_memory("GET", "/memory/{memory_id}", read=True)
own_and_foreign_memory("GET", "/memory/{memory_id}/history", read=True)
own_and_foreign_memory("PATCH", "/memory/{memory_id}", json={"importance": "high"})
own_and_foreign_memory("DELETE", "/memory/{memory_id}", json={"reason": "obsolete"})
own_and_foreign_memory("POST", "/memory/{memory_id}/restore", prepare=superseded_fact)


@row("POST", "/memory")
def store_memory(world: World, caller: str) -> None:
    foreign = world.call(caller, "POST", "/memory", json=memory(f"{caller} writes elsewhere",
                                                               client_id=other_client(caller)))
    if caller == "admin":
        assert foreign.status_code == 201
    else:
        assert "client_id:" in assert_error(foreign, 403)
    own = sorted(SCOPES[caller])[0]
    assert world.call(caller, "POST", "/memory", json=memory(f"{caller} own note", client_id=own)).status_code == 201
    # Without client_id: resolved among the caller's clients only ("Globex" names a client acme may not write to).
    unnamed = world.call(caller, "POST", "/memory", json=memory(f"Acme and Globex renewal call by {caller}"))
    if caller == "globex":  # its one client, named or not
        assert world.admin("GET", f"/memory/{unnamed.json()['id']}").json()["client_id"] == "globex"
        vague = world.call(caller, "POST", "/memory", json=memory("A renewal call with no name in it"))
        assert world.admin("GET", f"/memory/{vague.json()['id']}").json()["client_id"] == "globex"
    elif caller == "acme":  # the fingerprint "Acme", among acme-corp and acme-labs
        assert world.admin("GET", f"/memory/{unnamed.json()['id']}").json()["client_id"] == "acme-corp"
        vague = world.call(caller, "POST", "/memory", json=memory("A renewal call with no name in it"))
        assert "client_id:" in assert_error(vague, 400)
    else:  # two clients named: global, as semantics.md says
        assert world.admin("GET", f"/memory/{unnamed.json()['id']}").json()["client_id"] == "global"


@row("GET", "/stats")
def stats(world: World, caller: str) -> None:
    response = world.call(caller, "GET", "/stats")
    assert response.status_code == 200
    body = response.json()
    exported = world.admin("GET", "/export", params={"active_only": "false", "limit": 5000}).json()["memories"]
    mine = [record for record in exported if record["client_id"] in SCOPES[caller]]
    assert body["total_memories"] == sum(1 for record in mine if record["deleted_at"] is None)
    assert body["deleted"] == sum(1 for record in mine if record["deleted_at"] is not None)
    assert body["active"] == sum(1 for record in mine if record["active"])
    names = {entity["name"] for entity in body["entities"]["top_mentioned"]}
    assert "PostgreSQL" in names
    assert not names & {DISTINCT[c] for c in ALL - SCOPES[caller]}


@row("GET", "/entities")
def list_entities(world: World, caller: str) -> None:
    response = world.call(caller, "GET", "/entities", params={"limit": 500})
    assert response.status_code == 200
    names = {entity["name"] for entity in response.json()["entities"]}
    assert {DISTINCT[c] for c in SCOPES[caller]} | {"PostgreSQL"} <= names
    assert not names & {DISTINCT[c] for c in ALL - SCOPES[caller]}


@row("GET", "/entities/graph")
def entity_graph(world: World, caller: str) -> None:
    response = world.call(caller, "GET", "/entities/graph", params={"limit": 200})
    assert response.status_code == 200
    body = response.json()
    names = {node["canonical_name"] for node in body["nodes"]}
    assert {DISTINCT[c] for c in SCOPES[caller]} | {"PostgreSQL"} <= names
    assert not names & {DISTINCT[c] for c in ALL - SCOPES[caller]}
    ids = {node["id"] for node in body["nodes"]}
    assert body["edges"] and all({edge["source"], edge["target"]} <= ids for edge in body["edges"])


@row("GET", "/entities/stats")
def entity_stats(world: World, caller: str) -> None:
    response = world.call(caller, "GET", "/entities/stats")
    assert response.status_code == 200
    body = response.json()
    names = {entity["name"] for entity in body["top_mentioned"]}
    assert "PostgreSQL" in names and not names & {DISTINCT[c] for c in ALL - SCOPES[caller]}
    everyone = world.admin("GET", "/entities/stats").json()["total"]
    assert (body["total"] < everyone) == (caller != "admin")


@row("GET", "/entities/{name}")
def entity_detail(world: World, caller: str) -> None:
    for client_id, name in DISTINCT.items():
        response = world.call(caller, "GET", f"/entities/{name}")
        if allowed(caller, client_id):
            assert response.status_code == 200 and response.json()["mention_count"] >= 1
        else:
            assert_error(response, 404)  # another tenant's entity does not exist for this key
    related = {edge["name"] for edge in world.call(caller, "GET", "/entities/PostgreSQL").json()["related"]}
    assert {DISTINCT[c] for c in SCOPES[caller]} <= related
    assert not related & {DISTINCT[c] for c in ALL - SCOPES[caller]}


@row("GET", "/clients")
def list_clients(world: World, caller: str) -> None:
    response = world.call(caller, "GET", "/clients")
    assert response.status_code == 200
    assert {f["client_id"] for f in response.json()["clients"]} == SCOPES[caller] & set(FINGERPRINTS)


@row("GET", "/clients/{client_id}")
def get_client(world: World, caller: str) -> None:
    for client_id in FINGERPRINTS:
        response = world.call(caller, "GET", f"/clients/{client_id}")
        assert response.status_code == (200 if allowed(caller, client_id) else 403), response.text


@row("PUT", "/clients/{client_id}")
def put_client(world: World, caller: str) -> None:
    for client_id, name in FINGERPRINTS.items():
        before = world.admin("GET", f"/clients/{client_id}").json()
        response = world.call(caller, "PUT", f"/clients/{client_id}", json={"name": name, "aliases": [name]})
        if allowed(caller, client_id):
            assert response.status_code == 200, response.text
        else:
            assert_error(response, 403)
            assert world.admin("GET", f"/clients/{client_id}").json() == before


@row("DELETE", "/clients/{client_id}")
def delete_client(world: World, caller: str) -> None:
    for client_id in FINGERPRINTS:
        if not allowed(caller, client_id):
            assert_error(world.call(caller, "DELETE", f"/clients/{client_id}"), 403)
            assert world.admin("GET", f"/clients/{client_id}").status_code == 200
    # One of its own clients without a fingerprint: let through the tenant check, then "not found".
    own_without = {"acme": "acme-labs", "globex": None, "admin": "global-ish"}[caller]
    if own_without is not None:
        assert_error(world.call(caller, "DELETE", f"/clients/{own_without}"), 404)


@row("POST", "/export/import")
def import_records(world: World, caller: str) -> None:
    for client_id in ("acme-labs", "globex"):
        record_id = f"import-{caller}-{client_id}"
        body = {"operator_approved": True, "data": [
            {"id": record_id, "type": "event", "content": f"Imported note for {client_id} by {caller}",
             "source_agent": "import",
             "client_id": client_id}]}
        response = world.call(caller, "POST", "/export/import", json=body)
        if allowed(caller, client_id):
            assert response.status_code == 200 and response.json()["imported"] == 1, response.text
        else:
            assert assert_error(response, 403).startswith("data[0].client_id:")
            assert world.admin("GET", f"/memory/{record_id}").status_code == 404  # nothing written


@row("POST", "/reflect")
def reflect(world: World, caller: str) -> None:
    foreign = world.call(caller, "POST", "/reflect", json={"topic": "deployment", "client_id": other_client(caller)})
    own = world.call(caller, "POST", "/reflect", json={"topic": "deployment"})
    assert_error(own, 503)  # let through to the LLM, which this app does not have (tests/api/test_scoped_keys.py)
    assert_error(foreign, 503 if caller == "admin" else 403)


@row("POST", "/research")
def research(world: World, caller: str) -> None:
    foreign = world.call(caller, "POST", "/research", json={"topic": "deployment", "client_id": other_client(caller)})
    assert_error(world.call(caller, "POST", "/research", json={"topic": "deployment"}), 503)
    assert_error(foreign, 503 if caller == "admin" else 403)


def admin_only(method: str, route: str, path: str, admin_status: int, **kwargs: Any) -> None:
    def check(world: World, caller: str) -> None:
        response = world.call(caller, method, path, **kwargs)
        if caller == "admin":
            assert response.status_code == admin_status, response.text
        else:
            assert "role:" in assert_error(response, 403)

    MATRIX[(method, route)] = check


admin_only("POST", "/consolidate", "/consolidate", 503)  # no LLM here
admin_only("GET", "/consolidate/job/{job_id}", "/consolidate/job/no-such-job", 404)
admin_only("POST", "/entities/reclassify", "/entities/reclassify", 200,
           json={"reclassifications": [{"name": "PostgreSQL", "new_type": "system"}], "dry_run": True})
admin_only("DELETE", "/entities/{name}", "/entities/Nonexistium", 404)
admin_only("POST", "/entities/{name}/merge", "/entities/PostgreSQL/merge", 404, json={"merge_from": "Nonexistium"})
admin_only("POST", "/collections", "/collections", 201, json={"name": "research"})
admin_only("DELETE", "/collections/{name}", "/collections/nope", 404, params={"operator_approved": "true"})


@row("GET", "/collections")
def collection_list(world: World, caller: str) -> None:
    """The registry's names (one for every tenant, like upstream's): no memory of anyone's."""
    response = world.call(caller, "GET", "/collections")
    assert response.status_code == 200 and response.json()["collections"][0]["name"] == "shared_memories"


@row("GET", "/collections/{name}")
def collection_counts(world: World, caller: str) -> None:
    """The default collection's counts are the caller's own memories, as /stats's are."""
    counts = world.call(caller, "GET", "/collections/shared_memories").json()
    stats = world.call(caller, "GET", "/stats").json()
    assert (counts["points_count"], counts["vectors_count"]) == (stats["total_memories"], stats["vectors_count"])


admin_only("POST", "/admin/keys", "/admin/keys", 201, json={"name": "another", "role": "read", "clients": ["initech"]})
admin_only("GET", "/admin/keys", "/admin/keys", 200)
admin_only("DELETE", "/admin/keys/{key_id}", f"/admin/keys/{'0' * 32}", 404)


@row("GET", "/consolidate/status")
def consolidation_status(world: World, caller: str) -> None:
    assert world.call(caller, "GET", "/consolidate/status").status_code == 200


# -- the chat layer (/api/v1): a project is a client; a key of several clients names it (x-mnx-project-id) ------------

PROJECT = "x-mnx-project-id"
OWN_PROJECT = {"acme": "acme-corp", "globex": "globex", "admin": "global"}
CHAT_SUBJECT = "alice"


def chat_call(world: World, caller: str, method: str, path: str, project: str | None, **kwargs: Any) -> httpx.Response:
    headers = {"x-mnexium-key": world.keys[caller], **kwargs.pop("headers", {})}
    if project is not None:
        headers[PROJECT] = project
    return world.client.request(method, f"/api/v1{path}", headers=headers, **kwargs)


def seed_chat_projects(world: World) -> None:
    """In every project: alice's memory naming the project, an `account` schema and record, a prompt, state, a
    claim and a chat's history."""
    from zengram.chat.domain.history import NewMessage, Role
    from zengram.kernel.timestamps import utc_now

    for project in ALL:
        assert chat_call(world, "admin", "POST", "/memories", project, json={
            "subject_id": CHAT_SUBJECT, "text": f"Alice's project is {project}"}).status_code == 201
        assert chat_call(world, "admin", "POST", "/records/schemas", project, json={
            "type_name": "account", "fields": {"name": {"type": "string", "required": True}}}).is_success
        assert chat_call(world, "admin", "POST", "/records/account", project,
                         json={"data": {"name": f"{project} account"}}).status_code == 201
        assert chat_call(world, "admin", "POST", "/prompts", project, json={
            "name": project, "prompt_text": f"You serve {project}.", "is_default": True}).status_code == 201
        assert chat_call(world, "admin", "PUT", "/state/task", project, headers={"x-subject-id": CHAT_SUBJECT},
                         json={"value": {"project": project}}).is_success
        assert chat_call(world, "admin", "POST", "/claims", project, json={
            "subject_id": CHAT_SUBJECT, "slot": "project", "value": project}).status_code == 201
        assert chat_call(world, "admin", "POST", "/memory/policies", project, json={
            "name": project, "policy_text": f"Learn for {project}.", "is_default": True}).status_code == 201
        assert chat_call(world, "admin", "POST", "/integrations", project, json={
            "name": f"{project} hook", "mode": "webhook", "webhook_secret": "whsec"}).status_code == 201
        world.chat_layer.history.append(project, CHAT_SUBJECT, "chat-1", [
            NewMessage(role=Role.USER, content=f"hello from {project}")], utc_now())


def projects_in(rows: list[dict[str, Any]], field: str = "project_id") -> set[str]:
    return {row[field] for row in rows}


Shows = Callable[[httpx.Response], set[str]]


def chat_route(method: str, route: str, path: str, ok: int | tuple[int, ...], *, shows: Shows | None = None,
               **kwargs: Any) -> None:
    """A route of the chat layer: the caller's own project answers `ok` (and `shows` only it); another client's
    project is a 403 (the admin may use any); a key of several clients must name its project."""

    oks = ok if isinstance(ok, tuple) else (ok,)

    def check(world: World, caller: str) -> None:
        own = OWN_PROJECT[caller]
        response = chat_call(world, caller, method, path, own, **kwargs)
        assert response.status_code in oks, response.text
        if shows is not None:
            assert shows(response) == {own}
        foreign = chat_call(world, caller, method, path, other_client(caller), **kwargs)
        if caller == "admin":
            assert foreign.status_code in oks, foreign.text
        else:
            assert PROJECT in assert_error(foreign, 403)
        implied = chat_call(world, caller, method, path, None, **kwargs)
        if caller == "acme":  # two clients, and not `global`: it must say which
            assert assert_error(implied, 400).startswith(f"{PROJECT}: required")
        else:
            assert implied.status_code in oks, implied.text

    MATRIX[(method, f"/api/v1{route}")] = check


def by_id_in_globex(method: str, route: str, make: Callable[[World], str], ok: int = 200, *, key: str,
                    **kwargs: Any) -> None:
    """A route on one item of the globex project: its owners reach it, another tenant's key finds nothing (404:
    the item does not exist in its projects), and asking for the globex project is a 403."""

    def check(world: World, caller: str) -> None:
        item = make(world)
        path = route.replace("{id}", item)
        if caller == "acme":
            assert_error(chat_call(world, caller, method, path, "acme-corp", **kwargs), 404)
            assert PROJECT in assert_error(chat_call(world, caller, method, path, "globex", **kwargs), 403)
        else:
            response = chat_call(world, caller, method, path, "globex", **kwargs)
            assert response.status_code == ok, response.text
            if caller == "admin":
                assert_error(chat_call(world, caller, method, path, "global", **kwargs), 404)

    MATRIX[(method, f"/api/v1{key}")] = check


def globex_memory(world: World) -> str:
    response = chat_call(world, "admin", "POST", "/memories", "globex", json={
        "subject_id": CHAT_SUBJECT, "text": f"A globex note {uuid.uuid4()}", "no_supersede": True})
    memory_id: str = response.json()["id"]
    return memory_id


def globex_prompt(world: World) -> str:
    response = chat_call(world, "admin", "POST", "/prompts", "globex", json={"name": "p", "prompt_text": "x"})
    prompt_id: str = response.json()["prompt"]["id"]
    return prompt_id


def globex_record(world: World) -> str:
    response = chat_call(world, "admin", "POST", "/records/account", "globex", json={"data": {"name": "Globex Ltd"}})
    record_id: str = response.json()["record_id"]
    return record_id


def globex_claim(world: World) -> str:
    response = chat_call(world, "admin", "POST", "/claims", "globex", json={
        "subject_id": CHAT_SUBJECT, "slot": "note", "value": str(uuid.uuid4())})
    claim_id: str = response.json()["id"]
    return claim_id


def globex_policy(world: World) -> str:
    response = chat_call(world, "admin", "POST", "/memory/policies", "globex", json={"name": "p", "policy_text": "x"})
    policy_id: str = response.json()["policy"]["id"]
    return policy_id
def globex_integration(world: World) -> str:
    response = chat_call(world, "admin", "POST", "/integrations", "globex", json={
        "name": "a globex hook", "mode": "webhook", "webhook_secret": "whsec"})
    integration_id: str = response.json()["integration"]["integration_id"]
    return integration_id


def texts_name(response: httpx.Response) -> set[str]:
    """The projects alice's memories name (each names its own)."""
    return {row["text"].removeprefix("Alice's project is ") for row in response.json()["data"]
            if row["text"].startswith("Alice's project is ")}


ALICE = {"subject_id": CHAT_SUBJECT}
chat_route("POST", "/chat/completions", "/chat/completions", 503, json={  # let through to a provider: none here
    "model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}], "mnx": {"subject_id": CHAT_SUBJECT}})
chat_route("POST", "/messages", "/messages", 503, json={  # Anthropic's wire, likewise let through to no provider
    "model": "claude-sonnet-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
    "mnx": {"subject_id": CHAT_SUBJECT}})
chat_route("GET", "/memories", "/memories", 200, shows=texts_name, params=ALICE)
chat_route("POST", "/memories", "/memories", (201, 200), json={"subject_id": "bob", "text": "Bob likes tea"})
chat_route("GET", "/memories/search", "/memories/search", 200, shows=texts_name,
           params={**ALICE, "q": "Alice's project"})
chat_route("GET", "/memories/superseded", "/memories/superseded", 200, params=ALICE)
chat_route("GET", "/memories/recalls", "/memories/recalls", 200)
by_id_in_globex("GET", "/memories/{id}", globex_memory, key="/memories/{memory_id}")
by_id_in_globex("PATCH", "/memories/{id}", globex_memory, key="/memories/{memory_id}", json={"importance": 90})
by_id_in_globex("DELETE", "/memories/{id}", globex_memory, key="/memories/{memory_id}")
by_id_in_globex("POST", "/memories/{id}/restore", globex_memory, key="/memories/{memory_id}/restore")
chat_route("GET", "/chat/history/list", "/chat/history/list", 200, params=ALICE)
chat_route("GET", "/chat/history/read", "/chat/history/read", 200,
           shows=lambda r: {m["message"].removeprefix("hello from ") for m in r.json()["data"]},
           params={**ALICE, "chat_id": "chat-1"})
chat_route("DELETE", "/chat/history/delete", "/chat/history/delete", 404, params={**ALICE, "chat_id": "no-chat"})
chat_route("GET", "/chat/trace", "/chat/trace", 200, params={"chat_id": "chat-1"})
chat_route("GET", "/chat/learning", "/chat/learning", 200)
chat_route("POST", "/chat/learning/{job_id}/retry", "/chat/learning/job_unknown/retry", 404)
chat_route("GET", "/state/{key}", "/state/task", 200, shows=lambda r: {r.json()["value"]["project"]},
           headers={"x-subject-id": CHAT_SUBJECT})
chat_route("PUT", "/state/{key}", "/state/scratch", 200, headers={"x-subject-id": CHAT_SUBJECT},
           json={"value": [1, 2]})
chat_route("DELETE", "/state/{key}", "/state/unknown-key", 404, headers={"x-subject-id": CHAT_SUBJECT})
chat_route("POST", "/records/schemas", "/records/schemas", 200, json={
    "type_name": "ticket", "fields": {"title": {"type": "string"}}})
chat_route("GET", "/records/schemas", "/records/schemas", 200,
           shows=lambda r: projects_in(r.json()["schemas"]))
chat_route("GET", "/records/schemas/{type_name}", "/records/schemas/account", 200,
           shows=lambda r: {r.json()["project_id"]})
chat_route("POST", "/records/{type_name}", "/records/account", 201, json={"data": {"name": "Initrode"}})
chat_route("POST", "/records/{type_name}/query", "/records/account/query", 200,
           shows=lambda r: projects_in(r.json()["records"]), json={})
chat_route("POST", "/records/{type_name}/search", "/records/account/search", 200,
           shows=lambda r: projects_in(r.json()["records"]), json={"query": "account"})
by_id_in_globex("GET", "/records/account/{id}", globex_record, key="/records/{type_name}/{record_id}")
by_id_in_globex("PUT", "/records/account/{id}", globex_record, key="/records/{type_name}/{record_id}",
                json={"data": {"name": "Globex Inc"}})
by_id_in_globex("DELETE", "/records/account/{id}", globex_record, key="/records/{type_name}/{record_id}")
chat_route("GET", "/prompts", "/prompts", 200, shows=lambda r: projects_in(r.json()["prompts"]))
chat_route("POST", "/prompts", "/prompts", 201, json={"name": "n", "prompt_text": "t"})
chat_route("GET", "/prompts/resolve", "/prompts/resolve", 200, shows=lambda r: projects_in(r.json()["prompts"]))
by_id_in_globex("GET", "/prompts/{id}", globex_prompt, key="/prompts/{prompt_id}")
by_id_in_globex("PATCH", "/prompts/{id}", globex_prompt, key="/prompts/{prompt_id}", json={"priority": 5})
by_id_in_globex("DELETE", "/prompts/{id}", globex_prompt, key="/prompts/{prompt_id}")
CLAIMS_OF_ALICE = f"/claims/subject/{CHAT_SUBJECT}"
chat_route("POST", "/claims", "/claims", 201, json={"subject_id": "bob", "slot": "drink", "value": "tea"})
chat_route("GET", "/claims/subject/{subject_id}/truth", f"{CLAIMS_OF_ALICE}/truth", 200,
           shows=lambda r: {slot["value"] for slot in r.json()["slots"] if slot["slot"] == "project"})
chat_route("GET", "/claims/subject/{subject_id}/slot/{slot}", f"{CLAIMS_OF_ALICE}/slot/project", 200,
           shows=lambda r: {r.json()["value"]})
chat_route("GET", "/claims/subject/{subject_id}/slots", f"{CLAIMS_OF_ALICE}/slots", 200,
           shows=lambda r: projects_in(r.json()["slots"]["active"]))
chat_route("GET", "/claims/subject/{subject_id}/history", f"{CLAIMS_OF_ALICE}/history", 200,
           shows=lambda r: projects_in(r.json()["data"]))
chat_route("GET", "/claims/subject/{subject_id}/graph", f"{CLAIMS_OF_ALICE}/graph", 200,
           shows=lambda r: projects_in(r.json()["claims"]))
by_id_in_globex("GET", "/claims/{id}", globex_claim, key="/claims/{claim_id}")
by_id_in_globex("POST", "/claims/{id}/retract", globex_claim, key="/claims/{claim_id}/retract")
by_id_in_globex("GET", "/memories/{id}/claims", globex_memory, key="/memories/{memory_id}/claims")
chat_route("GET", "/profiles", "/profiles", 200, shows=lambda r: {r.json()["claims"]["project"]}, params=ALICE)
chat_route("PATCH", "/profiles", "/profiles", 200, json={"subject_id": "bob", "updates": [
    {"field_key": "timezone", "value": "UTC"}]})
chat_route("DELETE", "/profiles", "/profiles", 404, params={**ALICE, "field_key": "no_such_field"})
chat_route("GET", "/profiles/schema", "/profiles/schema", 200, shows=lambda r: {r.json()["project_id"]})
chat_route("GET", "/memory/policies", "/memory/policies", 200, shows=lambda r: projects_in(r.json()["policies"]))
chat_route("POST", "/memory/policies", "/memory/policies", 201, json={"name": "n", "policy_text": "t"})
chat_route("GET", "/memory/policies/resolve", "/memory/policies/resolve", 200,
           shows=lambda r: projects_in(r.json()["policies"]), params=ALICE)
by_id_in_globex("GET", "/memory/policies/{id}", globex_policy, key="/memory/policies/{policy_id}")
by_id_in_globex("PATCH", "/memory/policies/{id}", globex_policy, key="/memory/policies/{policy_id}",
                json={"priority": 5})
by_id_in_globex("DELETE", "/memory/policies/{id}", globex_policy, key="/memory/policies/{policy_id}")
def connected_project(response: httpx.Response) -> set[str]:
    """The project an event stream's `connected` event names (its first `data:` line)."""
    first = next(line for line in response.text.splitlines() if line.startswith("data:"))
    return {json.loads(first.removeprefix("data:"))["project_id"]}


chat_route("GET", "/events/memories", "/events/memories", 200, shows=connected_project, params=ALICE)
chat_route("GET", "/audit/requests", "/audit/requests", 200, shows=lambda r: {r.json()["project_id"]})

# Integrations: webhook ones (the matrix allows no outbound URL), so test, sync and deliveries are refused (400)
# once the key may reach the integration, and a webhook without its signature headers too.
chat_route("GET", "/integrations", "/integrations", 200, shows=lambda r: projects_in(r.json()["integrations"]))
chat_route("POST", "/integrations", "/integrations", 201, json={"name": "n", "mode": "webhook"})
INTEGRATION = "/integrations/{integration_id}"
by_id_in_globex("GET", "/integrations/{id}", globex_integration, key=INTEGRATION)
by_id_in_globex("PATCH", "/integrations/{id}", globex_integration, key=INTEGRATION, json={"description": "d"})
by_id_in_globex("DELETE", "/integrations/{id}", globex_integration, key=INTEGRATION)
for action in ("test", "sync", "webhook"):
    by_id_in_globex("POST", f"/integrations/{{id}}/{action}", globex_integration, 400,
                    key=f"{INTEGRATION}/{action}", json={})
by_id_in_globex("POST", "/integrations/{id}/deliveries", globex_integration, 400, key=f"{INTEGRATION}/deliveries",
                json={"event": "ping"})
by_id_in_globex("GET", "/integrations/{id}/deliveries", globex_integration, key=f"{INTEGRATION}/deliveries")


def shared_documents(method: str, route: str, path: str, admin_status: int, **kwargs: Any) -> None:
    """The document knowledge base is shared knowledge (`global`): keys whose clients do not include it are refused
    on every /kb route but health (after the role check); the admin key gets the route's own answer (none of these
    writes anything). Its errors carry `detail` beside `error`, as Agent Brain's clients read it."""

    def check(world: World, caller: str) -> None:
        response = world.call(caller, method, path, **kwargs)
        if caller == "admin":
            assert response.status_code == admin_status, response.text
            return
        assert response.status_code == 403, response.text
        expected = ("role:" if ROUTE_ROLES[(method, route)] is Role.ADMIN
                    else "client_id: the document knowledge base is shared knowledge")
        assert response.json()["error"].startswith(expected)

    MATRIX[(method, route)] = check


shared_documents("GET", "/kb/health/status", "/kb/health/status", 200)
shared_documents("GET", "/kb/query/count", "/kb/query/count/", 200)
shared_documents("GET", "/kb/query/chunk/{chunk_id}", "/kb/query/chunk/no-such-chunk", 404)
shared_documents("GET", "/kb/health/providers", "/kb/health/providers/", 200)
shared_documents("GET", "/kb/index/cache", "/kb/index/cache", 200)
shared_documents("DELETE", "/kb/index/cache", "/kb/index/cache/", 200)  # drops derived vectors only
shared_documents("GET", "/kb/health/config", "/kb/health/config", 200)
shared_documents("GET", "/kb/graph/entity/{entity_type}/{entity_id}", "/kb/graph/entity/Function/no/such.py::f", 404)
shared_documents("POST", "/kb/graph/project", "/kb/graph/project", 503, json={"source_tag": "docs"})  # not kept here
shared_documents("DELETE", "/kb/graph/project", "/kb/graph/project?source_tag=docs", 503)
shared_documents("POST", "/kb/query", "/kb/query/", 503, json={"query": "deployment"})  # nothing indexed yet
shared_documents("GET", "/kb/index/jobs", "/kb/index/jobs", 200)
shared_documents("GET", "/kb/index/jobs/{job_id}", "/kb/index/jobs/no-such-job", 404)
shared_documents("GET", "/kb/index/folders", "/kb/index/folders", 200)
shared_documents("POST", "/kb/index", "/kb/index", 400, json={"folder_path": ""})  # let in, then refused
shared_documents("POST", "/kb/index/add", "/kb/index/add/", 400, json={"folder_path": ""})
shared_documents("DELETE", "/kb/index/jobs/{job_id}", "/kb/index/jobs/no-such-job", 404)
shared_documents("DELETE", "/kb/index/folders", "/kb/index/folders", 404, json={"folder_path": "not-indexed"})
shared_documents("DELETE", "/kb/index", "/kb/index", 200)


# -- the tests ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("route", sorted(MATRIX), ids=lambda route: f"{route[0]} {route[1]}")
def test_tenant_matrix(world: World, route: tuple[str, str], caller: str) -> None:
    MATRIX[route](world, caller)


def test_the_matrix_covers_every_route(world: World) -> None:
    routes = {(method.upper(), f"{base}{path}") for base in ("", "/kb")
              for path, item in world.admin("GET", f"{base}/openapi.json").json()["paths"].items() for method in item}
    assert ("POST", "/kb/query") in routes  # the mounted document API is counted too
    assert set(MATRIX) == routes - {("GET", "/health"), ("GET", "/kb/health")} == set(ROUTE_ROLES)


def test_a_key_that_lists_global_uses_the_document_knowledge_base_by_its_role(world: World) -> None:
    reader = world.admin("POST", "/admin/keys", json={"name": "docs reader", "role": "read",
                                                      "clients": ["initech", "global"]}).json()["key"]
    as_reader = {"x-api-key": reader}
    assert world.client.get("/kb/index/jobs", headers=as_reader).status_code == 200
    assert world.client.post("/kb/query", json={"query": "deployment"}, headers=as_reader).status_code == 503
    refused = world.client.post("/kb/index", json={"folder_path": "/tmp"}, headers=as_reader)
    assert refused.status_code == 403
    assert refused.json()["error"] == "role: this API key is read; POST /kb/index needs write"
    assert world.client.get("/kb/health").status_code == 200  # health needs no key at all


def test_a_search_without_client_id_never_reaches_another_tenant(world: World) -> None:
    """Every distinct entity's own words, searched by every key: only the key's clients come back."""
    for caller in ("acme", "globex"):
        for name in DISTINCT.values():
            hits = world.call(caller, "GET", "/memory/search", params={"q": name, "format": "full", "limit": 100})
            assert clients_in(hits.json()["results"]) <= SCOPES[caller], (caller, name)


def test_global_memories_are_seen_only_by_keys_that_list_global(world: World) -> None:
    created = world.admin("POST", "/admin/keys", json={"name": "shared", "role": "read",
                                                        "clients": ["initech", "global"]}).json()
    world.keys["shared"] = created["key"]
    response = world.call("shared", "GET", "/memory/query", params={"type": "facts", "limit": 500})
    assert clients_in(response.json()["results"]) == {"initech", "global"}
    assert world.call("shared", "GET", f"/memory/{world.events['global']}").status_code == 200
    assert world.call("acme", "GET", f"/memory/{world.events['global']}").status_code == 403


# -- client fingerprints stay in their tenant (issue 37, section 3) ---------------------------------------------

FINGERPRINTED = {"tenant-a": {"name": "Aardvark Ltd", "aliases": ["Aardvark"]},
                 "tenant-b": {"name": "Bluefin Analytics", "aliases": ["Bluefin"], "keywords": ["tunaflow"]},
                 "tenant-c": {"name": "Cormorant Freight", "aliases": ["Cormorant"],
                              "keywords": ["harbourline", "quayside"]}}


@pytest.fixture
def tenants(tmp_path: Path) -> Iterator[World]:
    """tenant-a, tenant-b, tenant-c with fingerprints; a write key for each, named after its client."""
    settings = Settings(data_dir=tmp_path / "data", api_key=API_KEY, rate_limit_enabled=False, llm_base_url=None,
                        llm_api_key=None, llm_api_key_secret_id=None)
    container = build_container(settings, embedder=HashingEmbedder(), clock=TickingClock())
    try:
        with TestClient(build_embedded_app(settings, container)) as client:
            built = World(client, {"admin": API_KEY})
            for client_id, fingerprint in FINGERPRINTED.items():
                assert built.admin("PUT", f"/clients/{client_id}", json=fingerprint).is_success
                created = built.admin("POST", "/admin/keys", json={"name": client_id, "role": "write",
                                                                    "clients": [client_id]})
                built.keys[client_id] = created.json()["key"]
            yield built
    finally:
        container.close()


def test_a_scoped_write_naming_another_tenants_alias_is_not_linked_to_that_tenant(tenants: World) -> None:
    stored = tenants.call("tenant-a", "POST", "/memory", json=memory(
        "Bluefin asked about our PostgreSQL backups", client_id="tenant-a"))
    assert stored.status_code == 201, stored.text
    entities = tenants.admin("GET", f"/memory/{stored.json()['id']}").json()["entities"]
    assert "tenant-b" not in {entity["name"] for entity in entities}
    imported = tenants.call("tenant-a", "POST", "/export/import", json={"operator_approved": True, "data": [
        {"id": "imported-a-1", "type": "event", "content": "Bluefin renewed", "source_agent": "import",
         "client_id": "tenant-a"},
        {"id": "imported-a-2", "type": "event", "content": "Bluefin called", "source_agent": "import",
         "client_id": "tenant-a", "entities": [{"name": "tenant-b", "type": "client"}]}]})
    assert imported.status_code == 200 and imported.json()["imported"] == 2, imported.text
    for record_id in ("imported-a-1", "imported-a-2"):
        names = {entity["name"] for entity in tenants.admin("GET", f"/memory/{record_id}").json()["entities"]}
        assert "tenant-b" not in names, (record_id, names)
    tenants.new_memory("tenant-a", "Bluefin and Aardvark share a PostgreSQL vendor")  # the admin may link them
    for name in ("Bluefin", "tenant-b", "Bluefin Analytics"):
        assert_error(tenants.call("tenant-a", "GET", f"/entities/{name}"), 404)
    listed = tenants.call("tenant-a", "GET", "/entities", params={"limit": 100}).json()
    assert "tenant-b" not in str(listed) and "Bluefin" not in str(listed)
    related = tenants.call("tenant-a", "GET", "/entities/PostgreSQL").json()["related"]
    assert "tenant-b" not in {edge["name"] for edge in related}
    for path in ("/entities/stats", "/entities/graph", "/stats"):
        shown = tenants.call("tenant-a", "GET", path)
        assert shown.status_code == 200 and "tenant-b" not in shown.text and "Bluefin" not in shown.text, path


def test_a_scoped_key_cannot_claim_another_tenants_fingerprint_terms(tenants: World) -> None:
    for claim in ({"aliases": ["Cormorant"]}, {"name": "Cormorant Freight"},
                  {"keywords": ["Harbourline", "quayside"]}, {"domains": ["bluefin"]}):
        refused = tenants.call("tenant-a", "PUT", "/clients/tenant-a", json=claim)
        assert_error(refused, 409)
        assert "tenant-c" not in refused.text and "tenant-b" not in refused.text
    assert tenants.admin("GET", "/clients/tenant-a").json()["aliases"] == ["Aardvark"]
    assert tenants.call("tenant-a", "PUT", "/clients/tenant-a", json={"aliases": ["Aardvark", "Anteater"]}).is_success
    about_c = tenants.admin("POST", "/memory", json=memory("Cormorant renewed the harbourline contract"))
    seen_by_c = tenants.call("tenant-c", "GET", f"/memory/{about_c.json()['id']}")
    assert seen_by_c.status_code == 200 and seen_by_c.json()["client_id"] == "tenant-c", seen_by_c.text
