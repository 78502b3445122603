"""The memory event stream and the request audit on the embedded app (SQLite), in the long-poll mode the AWS host
runs (`chat_events_window_seconds` > 0: a response ends once it has delivered events): every kind of event in
order with gap-free ids, resuming with Last-Event-ID, tenants kept apart; audit rows with the caller, subject,
route, status, tokens and session, and nothing secret. The streaming mode (and the SDK) is in
tests/clients/test_mnexium_sdk_events.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import Container, build_container
from zengram.embedded.app import build_embedded_app
from zengram.kernel.ports import Embedder
from zengram.settings import Settings

from tests.api.chat.conftest import OPENAI_KEY, ChatClock, complete, wait_for_learning
from tests.llm_server import ScriptedLLMServer
from tests.support import API_KEY

EVENTS = "/api/v1/events/memories"


@pytest.fixture
def polling_settings(chat_settings: Settings) -> Settings:
    return chat_settings.model_copy(update={"chat_events_window_seconds": 0.3, "chat_events_poll_seconds": 0.02})


@pytest.fixture
def api(polling_settings: Settings, minilm: Embedder) -> Iterator[TestClient]:
    container: Container = build_container(polling_settings, embedder=minilm, clock=ChatClock())
    try:
        with TestClient(build_embedded_app(polling_settings, container), headers={"x-mnexium-key": API_KEY}) as client:
            yield client
    finally:
        container.close()


def parse_sse(text: str) -> list[dict[str, Any]]:
    """Each event of a server-sent event stream: its `id` (or None), `event` and JSON `data`."""
    events = []
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            name, _, value = line.partition(": ")
            fields[name] = value
        if "event" in fields:
            events.append({"id": int(fields["id"]) if "id" in fields else None, "event": fields["event"],
                           "data": json.loads(fields["data"])})
    return events


def memory_events(api: TestClient, subject: str = "alice", since: int | None = 0, **headers: str
                  ) -> list[dict[str, Any]]:
    """The memory events one long poll answers; `since` the `last_event_id` parameter (None: none sent)."""
    position = {"last_event_id": since} if since is not None else {}
    response = api.get(EVENTS, params={"subject_id": subject, **position}, headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(response.text)
    assert events[0]["event"] == "connected" and events[0]["data"]["subject_id"] == subject
    assert events[0]["id"] == events[0]["data"]["last_event_id"]  # where this stream starts
    return [event for event in events[1:] if event["event"].startswith("memory.")]


def add(api: TestClient, text: str, subject: str = "alice", **headers: str) -> dict[str, Any]:
    response = api.post("/api/v1/memories", json={"subject_id": subject, "text": text}, headers=headers)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def test_every_kind_of_memory_event_in_order(api: TestClient, llm_server: ScriptedLLMServer) -> None:
    blueberry = add(api, "Favorite fruit is blueberry")
    apple = add(api, "Favorite fruit is apple")  # supersedes blueberry (tests/api/chat/test_memories.py)
    assert apple["superseded_ids"] == [blueberry["id"]]
    assert api.patch(f"/api/v1/memories/{apple['id']}", json={"text": "Favorite fruit is a green apple"}
                     ).status_code == 200
    assert api.delete(f"/api/v1/memories/{apple['id']}").json()["deleted"] is True
    assert api.post(f"/api/v1/memories/{blueberry['id']}/restore").json()["restored"] is True
    llm_server.script("Blueberries it is.", route="openai")
    complete(api, "Which fruit do I like?", subject_id="alice", chat_id="c1", recall=True, learn=False)

    events = memory_events(api)

    assert [(e["event"], e["data"]["id"]) for e in events] == [
        ("memory.created", blueberry["id"]), ("memory.created", apple["id"]),
        ("memory.superseded", blueberry["id"]), ("memory.updated", apple["id"]), ("memory.deleted", apple["id"]),
        ("memory.restored", blueberry["id"]), ("memory.recalled", blueberry["id"])]
    assert [e["id"] for e in events] == list(range(1, 8))  # gap-free, in the order they happened
    assert events[0]["data"]["text"] == "Favorite fruit is blueberry" and events[0]["data"]["kind"] == "fact"
    assert events[2]["data"]["superseded_by"] == apple["id"]
    assert events[6]["data"]["chat_id"] == "c1"
    assert all(e["data"]["subject_id"] == "alice" and e["data"]["event_id"] == e["id"] for e in events)
    assert memory_events(api, "bob") == []  # another subject's log is its own


def test_a_client_resumes_after_last_event_id(api: TestClient) -> None:
    for fruit in ("Lives in Lisbon", "Works as a baker", "Plays the cello"):
        add(api, fruit)
    assert [e["id"] for e in memory_events(api, **{"Last-Event-ID": "1"})] == [2, 3]
    assert [e["id"] for e in api_events(api, last_event_id=2)] == [3]
    assert memory_events(api, **{"Last-Event-ID": "3"}) == []  # nothing new: the long poll ends empty
    assert [e["id"] for e in memory_events(api, **{"Last-Event-ID": "evt-7"})] == [1, 2, 3]  # not ours: ignored
    # without a position, a stream starts from now on (as core-mnx's does): its `connected` carries the position
    fresh = parse_sse(api.get(EVENTS, params={"subject_id": "alice"}).text)
    assert [(e["event"], e["id"]) for e in fresh] == [("connected", 3)]
    add(api, "Owns a bicycle")
    resumed = memory_events(api, **{"Last-Event-ID": "3"})
    assert [(e["id"], e["data"]["text"]) for e in resumed] == [(4, "Owns a bicycle")]


def api_events(api: TestClient, **params: Any) -> list[dict[str, Any]]:
    response = api.get(EVENTS, params={"subject_id": "alice", **params})
    return [e for e in parse_sse(response.text) if e["event"].startswith("memory.")]


def test_the_stream_refuses_bad_input(api: TestClient) -> None:
    assert api.get(EVENTS).status_code == 400  # subject_id is required
    assert api.get(EVENTS, params={"subject_id": "a b"}).status_code == 400
    assert api.get(EVENTS, params={"subject_id": "alice", "last_event_id": -1}).status_code == 400
    too_far = api.get(EVENTS, params={"subject_id": "alice"}, headers={"Last-Event-ID": "9" * 30})
    assert too_far.status_code == 400 and too_far.json()["error"].startswith("Last-Event-ID")
    assert api.get(EVENTS, params={"subject_id": "alice"}, headers={"x-mnexium-key": "wrong"}).status_code == 401


def scoped_key(api: TestClient, name: str, client: str, role: str = "write") -> str:
    admin = {"x-api-key": API_KEY}
    assert api.put(f"/clients/{client}", headers=admin, json={"name": client.title()}).status_code in (200, 201)
    response = api.post("/admin/keys", headers=admin, json={"name": name, "role": role, "clients": [client]})
    assert response.status_code == 201, response.text
    key: str = response.json()["key"]
    return key


def test_a_key_sees_only_its_tenants_events_and_audit(api: TestClient) -> None:
    acme, globex = scoped_key(api, "acme-app", "acme"), scoped_key(api, "globex-app", "globex")
    add(api, "Prefers tea", **{"x-mnexium-key": acme})
    add(api, "Prefers coffee", **{"x-mnexium-key": globex})

    assert [e["data"]["text"] for e in memory_events(api, **{"x-mnexium-key": acme})] == ["Prefers tea"]
    assert [e["data"]["text"] for e in memory_events(api, **{"x-mnexium-key": globex})] == ["Prefers coffee"]
    assert memory_events(api) == []  # the admin key's project is `global`: neither tenant's subject
    refused = api.get(EVENTS, params={"subject_id": "alice"},
                      headers={"x-mnexium-key": acme, "x-mnx-project-id": "globex"})
    assert refused.status_code == 403

    rows = api.get("/api/v1/audit/requests", headers={"x-mnexium-key": acme}).json()
    assert rows["project_id"] == "acme" and {row["key_name"] for row in rows["data"]} == {"acme-app"}
    assert api.get("/api/v1/audit/requests", headers={"x-mnexium-key": acme, "x-mnx-project-id": "globex"}
                   ).status_code == 403


def test_each_request_is_audited_without_secrets(api: TestClient, llm_server: ScriptedLLMServer) -> None:
    secret_question = "My locker code is zebra-quartz, what fruit do I like?"
    llm_server.script("Apples.", route="openai")
    complete(api, secret_question, subject_id="alice", chat_id="c1", learn=False, headers={"x-session-id": "s-42"})
    add(api, "Favorite fruit is apple", **{"x-session-id": "s-42"})
    assert api.get("/api/v1/memories/mem_missing").status_code == 404
    assert api.get(EVENTS, params={"subject_id": "alice"}).status_code == 200

    response = api.get("/api/v1/audit/requests")
    assert response.status_code == 200
    rows = response.json()["data"]
    assert [(row["method"], row["route"], row["status"]) for row in rows] == [
        ("GET", EVENTS, 200), ("GET", "/api/v1/memories/{memory_id}", 404), ("POST", "/api/v1/memories", 201),
        ("POST", "/api/v1/chat/completions", 200)]
    turn = rows[-1]
    assert (turn["key_name"], turn["subject_id"], turn["chat_id"], turn["session_id"]) == (
        "bootstrap admin key (BRAIN_API_KEY)", "alice", "c1", "s-42")
    assert (turn["prompt_tokens"], turn["completion_tokens"], turn["total_tokens"]) == (1, 1, 2)
    assert rows[0]["subject_id"] == "alice" and rows[0]["prompt_tokens"] is None
    assert all(row["duration_ms"] >= 0 and row["request_id"] for row in rows)
    for secret in (OPENAI_KEY, API_KEY, "zebra-quartz", "Favorite fruit"):  # keys and message bodies: never
        assert secret not in response.text

    by_session = api.get("/api/v1/audit/requests", params={"session_id": "s-42"}).json()["data"]
    assert [row["route"] for row in by_session] == ["/api/v1/memories", "/api/v1/chat/completions"]
    first = api.get("/api/v1/audit/requests", params={"limit": 3}).json()
    rest = api.get("/api/v1/audit/requests", params={"before": first["next_before"]}).json()
    assert [row["id"] for row in first["data"] + rest["data"]][:4] == [row["id"] for row in rows]
    assert api.get("/api/v1/audit/requests", params={"before": "x"}).status_code == 400

    history = api.get("/api/v1/chat/history/read", params={"chat_id": "c1", "subject_id": "alice"}).json()
    assert {m["metadata"].get("session_id") for m in history["messages"]} == {"s-42"}
    assert complete(api, "hi", expect=400, headers={"x-session-id": "bad id"})


def test_what_learning_learns_is_an_event_too(api: TestClient, llm_server: ScriptedLLMServer) -> None:
    llm_server.script({"memories": [{"text": "User's favorite color is blue", "kind": "preference"}]})
    llm_server.script("Noted!", route="openai")
    complete(api, "My favorite color is blue", subject_id="erin", chat_id="c9")
    wait_for_learning(api, "c9")
    events = memory_events(api, "erin")
    assert [(e["event"], e["data"]["text"], e["data"]["source"]) for e in events] == [
        ("memory.created", "User's favorite color is blue", "inferred")]
