"""Memory policies (docs/chat.md, "Memory policies"): `/memory/policies` CRUD and resolve, chosen per request by
`mnx.memory_policy` or the `x-mnx-memory-policy` header, and each config key changing what learning keeps or what
recall injects — on the embedded host (SQLite) and the DynamoDB host (moto). The provider and the learning model are
the scripted server: a test scripts what extraction answers and reads the messages the provider received."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import build_container
from zengram.embedded.app import build_embedded_app
from zengram.kernel.ports import Embedder
from zengram.settings import Settings

from tests.api.chat.conftest import ChatClock, complete, wait_for_learning
from tests.clients.test_mnexium_sdk import host_settings  # noqa: F401  (a fixture: SQLite and DynamoDB on moto)
from tests.llm_server import ScriptedLLMServer
from tests.support import API_KEY

POLICIES = "/api/v1/memory/policies"
EXTRACTED = {"memories": [
    {"text": "User's name is Ana", "kind": "fact", "importance": 90, "confidence": 0.95},
    {"text": "User prefers tea over coffee", "kind": "preference", "importance": 60, "confidence": 0.9},
    {"text": "User is planning a trip to Rome", "kind": "context", "importance": 40, "confidence": 0.6},
]}


@pytest.fixture
def host(host_settings: Settings, minilm: Embedder) -> Iterator[TestClient]:  # noqa: F811
    container = build_container(host_settings, embedder=minilm, clock=ChatClock())
    try:
        with TestClient(build_embedded_app(host_settings, container), headers={"x-mnexium-key": API_KEY}) as client:
            yield client
    finally:
        container.close()


def policy(client: TestClient, expect: int = 201, **fields: Any) -> dict[str, Any]:
    body = {"name": "p", "policy_text": "", "is_default": True, **fields}
    response = client.post(POLICIES, json=body)
    assert response.status_code == expect, response.text
    created: dict[str, Any] = response.json()
    return created["policy"] if expect == 201 else created


def learned(client: TestClient, llm_server: ScriptedLLMServer, subject: str, chat: str, **mnx: Any) -> list[str]:
    """The texts of the memories one turn learns from `EXTRACTED`, with the options `mnx`."""
    llm_server.script(EXTRACTED)
    llm_server.script("ok", route="openai")
    complete(client, "Hi, I'm Ana; tea please; off to Rome soon.", subject_id=subject, chat_id=chat, **mnx)
    assert [job["status"] for job in wait_for_learning(client, chat)] == ["done"]
    data = client.get("/api/v1/memories", params={"subject_id": subject}).json()["data"]
    return sorted(memory["text"] for memory in data)


ALL = sorted(m["text"] for m in EXTRACTED["memories"])
# What a config key does is the same on every host (the service applies it); the stores differ, and the tests of
# CRUD, resolution, the header and the private flag run on both. The per-key cases run on SQLite only, to keep the
# suite short.
SQLITE_ONLY = pytest.mark.parametrize("host_settings", ["sqlite"], indirect=True)


def test_crud_resolve_and_scopes(host: TestClient) -> None:
    project = policy(host, name="Support default", policy_text="Keep durable preferences.",
                     config={"include_kinds": ["fact", "preference"], "confidence_min": 0.7}, id="mp_support")
    assert (project["id"], project["scope"], project["scope_id"], project["config"]) == (
        "mp_support", "project", None, {"include_kinds": ["fact", "preference"], "confidence_min": 0.7})
    policy(host, id="mp_support", expect=409)
    subject = policy(host, name="Ana's", policy_text="Ana's rules.", scope="subject", scope_id="ana",
                     config={"confidence_min": 0.2, "max_memories_per_turn": 2})
    policy(host, name="off", scope="chat", scope_id="c1", is_active=False, config={"importance_min": 99})
    assert host.get(f"{POLICIES}/mp_support").json()["name"] == "Support default"

    resolved = host.get(f"{POLICIES}/resolve", params={"subject_id": "ana", "chat_id": "c1"}).json()
    assert resolved["policy_ids"] == ["mp_support", subject["id"]]  # the inactive chat policy is left out
    assert resolved["policy_text"] == "Keep durable preferences.\n\nAna's rules."
    assert resolved["config"] == {"include_kinds": ["fact", "preference"], "confidence_min": 0.2,
                                  "max_memories_per_turn": 2}  # the subject's key wins
    assert resolved["effective"]["recall_private"] is True and resolved["effective"]["recall_limit"] == 5
    assert host.get(f"{POLICIES}/resolve", params={"subject_id": "bo"}).json()["policy_ids"] == ["mp_support"]
    first = policy(host, id="mp_first", priority=5, config={"confidence_min": 0.9})  # made later, ranked first
    ranked = host.get(f"{POLICIES}/resolve", params={"subject_id": "bo"}).json()
    assert ranked["policy_ids"] == [first["id"], "mp_support"] and ranked["config"]["confidence_min"] == 0.7
    host.delete(f"{POLICIES}/{first['id']}")

    listed = host.get(POLICIES).json()
    assert listed["count"] == 2 and host.get(POLICIES, params={"include_inactive": True}).json()["count"] == 3
    assert [p["scope"] for p in host.get(POLICIES, params={"scope": "subject"}).json()["policies"]] == ["subject"]
    patched = host.patch(f"{POLICIES}/mp_support", json={"is_default": False, "config": {"importance_min": 10}})
    assert patched.json()["policy"]["config"] == {"importance_min": 10}
    assert host.get(f"{POLICIES}/resolve", params={"subject_id": "bo"}).json()["policy_ids"] == []
    assert host.delete(f"{POLICIES}/mp_support").json() == {"ok": True, "deleted": True}
    assert host.get(f"{POLICIES}/mp_support").status_code == 404
    assert host.delete(f"{POLICIES}/mp_support").status_code == 404


BAD = [({"name": "x", "policy_text": "", "config": {"recall_limitt": 1}}, "recall_limitt"),
       ({"name": "x", "policy_text": "", "config": {"confidence_min": 2}}, "confidence_min"),
       ({"name": "x", "policy_text": "", "config": {"max_memories_per_turn": 0}}, "max_memories_per_turn"),
       ({"name": "x", "policy_text": "", "scope": "subject"}, "scope_id"),
       ({"policy_text": ""}, "name")]


@SQLITE_ONLY
def test_bad_policies_are_refused_with_the_field(host: TestClient) -> None:
    for body, field in BAD:
        response = host.post(POLICIES, json=body)
        assert response.status_code == 400 and field in response.json()["error"], (body, response.text)
    assert host.get(POLICIES, params={"include_inactive": True}).json()["count"] == 0


@pytest.mark.parametrize(("config", "kept"), [
    ({"include_kinds": ["preference", "context"]}, ["User is planning a trip to Rome", "User prefers tea over coffee"]),
    ({"exclude_kinds": ["fact"]}, ["User is planning a trip to Rome", "User prefers tea over coffee"]),
    ({"confidence_min": 0.85}, ["User prefers tea over coffee", "User's name is Ana"]),
    ({"importance_min": 50}, ["User prefers tea over coffee", "User's name is Ana"]),
    ({"max_memories_per_turn": 1}, ["User's name is Ana"]),  # the most important one
])
@SQLITE_ONLY
def test_each_learning_key_changes_what_is_kept(host: TestClient, llm_server: ScriptedLLMServer,
                                                config: dict[str, Any], kept: list[str]) -> None:
    assert learned(host, llm_server, "free", "c0") == ALL  # no policy: everything extracted is kept
    policy(host, config=config)
    assert learned(host, llm_server, "held", "c1") == kept
    outcome = host.get("/api/v1/chat/learning", params={"chat_id": "c1"}).json()["jobs"][0]["outcome"]
    assert sorted(f["text"] for f in outcome["filtered"]) == sorted(set(ALL) - set(kept))


def test_the_policy_text_reaches_the_extraction(host: TestClient, llm_server: ScriptedLLMServer) -> None:
    learned(host, llm_server, "ana", "c0")
    assert "memory policy" not in llm_server.calls_to("")[-1].messages[0]["content"]
    policy(host, policy_text="Never keep travel plans.")
    learned(host, llm_server, "ana", "c1")
    assert "memory policy (follow it when choosing what to keep):\nNever keep travel plans." in \
        llm_server.calls_to("")[-1].messages[0]["content"]


def test_the_header_and_the_option_choose_the_policy(host: TestClient, llm_server: ScriptedLLMServer) -> None:
    policy(host, config={"include_kinds": ["fact"]})  # the project's default
    strict = policy(host, is_default=False, config={"include_kinds": ["context"]})
    assert learned(host, llm_server, "a", "c1") == ["User's name is Ana"]
    llm_server.script(EXTRACTED)
    llm_server.script("ok", route="openai")
    complete(host, "hello", subject_id="b", chat_id="c2", headers={"x-mnx-memory-policy": strict["id"]})
    wait_for_learning(host, "c2")
    assert [m["text"] for m in host.get("/api/v1/memories", params={"subject_id": "b"}).json()["data"]] == [
        "User is planning a trip to Rome"]
    llm_server.script(EXTRACTED)
    llm_server.script("ok", route="openai")
    complete(host, "hello", subject_id="c", chat_id="c3", headers={"x-mnx-memory-policy": "false"})
    wait_for_learning(host, "c3")
    assert len(host.get("/api/v1/memories", params={"subject_id": "c"}).json()["data"]) == 3  # none applied
    assert learned(host, llm_server, "d", "c4", memory_policy=False) == ALL  # the option, as the SDK sends it
    trace = host.get("/api/v1/chat/trace", params={"chat_id": "c2"}).json()["events"][0]
    assert trace["options"]["memory_policy_applied"] == [strict["id"]]
    llm_server.script("never sent", route="openai")
    refused = complete(host, "hello", subject_id="e", headers={"x-mnx-memory-policy": "mp_nope"}, expect=404)
    assert "mp_nope" in refused["error"]
    llm_server.reset()


def _seed(host: TestClient) -> None:
    """Two private memories of Ana's and a shared one, of different kinds (none supersedes another)."""
    for text, kind, visibility in [("Ana's favourite tea is green tea", "preference", "private"),
                                   ("Ana drinks tea every morning", "fact", "private"),
                                   ("The office serves jasmine tea", "note", "shared")]:
        response = host.post("/api/v1/memories", json={"subject_id": "ana" if visibility == "private" else "staff",
                                                        "text": text, "kind": kind, "visibility": visibility})
        assert response.status_code == 201, response.text


def injected(host: TestClient, llm_server: ScriptedLLMServer, chat: str) -> list[str]:
    """The memories the provider received for a question about tea, in the system message."""
    llm_server.script("ok", route="openai")
    complete(host, "What tea do I like?", subject_id="ana", chat_id=chat, recall=True, learn=False, history=False)
    system = llm_server.calls_to("openai")[-1].messages[0]["content"]
    return sorted(line[2:] for line in system.split("\n") if line.startswith("- "))


@pytest.mark.parametrize(("config", "expected"), [
    ({"recall_limit": 1}, 1),
    ({"recall_limit": 0}, 0),
    ({"recall_min_relevance": 0.99}, 0),
])
@SQLITE_ONLY
def test_each_recall_key_changes_what_is_injected(host: TestClient, llm_server: ScriptedLLMServer,
                                                  config: dict[str, Any], expected: int) -> None:
    _seed(host)
    assert len(injected(host, llm_server, "c0")) == 3
    policy(host, config=config)
    assert len(injected(host, llm_server, "c1")) == expected


@SQLITE_ONLY
def test_the_trace_names_the_policy_as_the_cutoff_it_applied(host: TestClient, llm_server: ScriptedLLMServer) -> None:
    """Issue 37: the recall event says what was cut and why; a policy's cutoff is named as the policy's."""
    _seed(host)
    policy(host, config={"recall_min_relevance": 0.99})
    injected(host, llm_server, "c2")
    considered = host.get("/api/v1/chat/trace", params={"chat_id": "c2"}).json()["events"][-1]["options"][
        "memories_considered"]
    assert (considered["injected"], considered["cutoff"]) == (0, 0.99) and considered["cut"]
    assert all(cut["reason"].endswith("below the cutoff 0.99 (the memory policy's recall_min_relevance)")
               for cut in considered["cut"])


def test_a_policy_may_keep_private_memories_out_of_the_context(host: TestClient,
                                                               llm_server: ScriptedLLMServer) -> None:
    _seed(host)
    assert "Ana drinks tea every morning" in injected(host, llm_server, "c0")
    policy(host, scope="subject", scope_id="ana", config={"recall_private": False})
    assert injected(host, llm_server, "c1") == ["The office serves jasmine tea"]


@SQLITE_ONLY
def test_a_policys_free_text_is_scrubbed_before_it_is_kept(host: TestClient) -> None:
    secret = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
    made = policy(host, name=f"n {secret}", policy_text=f"never keep {secret}", metadata={"note": secret})
    patched = host.patch(f"{POLICIES}/{made['id']}", json={"policy_text": f"still {secret}"}).json()["policy"]
    kept = host.get(f"{POLICIES}/{made['id']}").json()
    assert secret not in str(made) + str(patched) + str(kept)
    assert "[REDACTED:github-token:" in kept["policy_text"] and "[REDACTED:github-token:" in kept["name"]
