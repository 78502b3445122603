"""Claims learned from a conversation (docs/chat.md, "Claims"): with `learn: true`, the claims the extraction
model names are asserted for the subject (`source: "learned"`), each superseding its slot's value, linked to the
memory they came from, and injected by the next completion with recall on — and the profile schema route. On the
embedded host (SQLite) and the DynamoDB host (moto)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.chat.conftest import complete, wait_for_learning
from tests.api.chat.test_policies import host  # noqa: F401  (a fixture: the app on SQLite and on DynamoDB)
from tests.clients.test_mnexium_sdk import host_settings  # noqa: F401  (the hosts `host` runs on)
from tests.llm_server import ScriptedLLMServer

V1 = "/api/v1"
SQLITE_ONLY = pytest.mark.parametrize("host_settings", ["sqlite"], indirect=True)  # host-independent logic
MOVED = {"memories": [{"text": "User moved to Porto for a new job", "kind": "fact", "importance": 80}],
         "claims": [{"slot": "home_city", "value": "Porto", "confidence": 0.9, "memory": 0},
                    {"slot": "employer", "value": "Acme", "confidence": 0.7}]}


def learn_turn(client: TestClient, llm_server: ScriptedLLMServer, extraction: dict[str, Any], chat: str,
               **mnx: Any) -> dict[str, Any]:
    """One turn whose extraction answers `extraction`; the learning job's outcome."""
    llm_server.script(extraction)
    llm_server.script("Congratulations!", route="openai")
    complete(client, "I moved to Porto to work at Acme.", subject_id="ana", chat_id=chat, **mnx)
    [job] = wait_for_learning(client, chat)
    assert job["status"] == "done", job
    outcome: dict[str, Any] = job["outcome"]
    return outcome


def test_learning_asserts_the_claims_the_model_names(host: TestClient,  # noqa: F811
                                                     llm_server: ScriptedLLMServer) -> None:
    outcome = learn_turn(host, llm_server, MOVED, "c1")
    assert len(outcome["claims"]) == 2 and len(outcome["created"]) == 1
    truth = host.get(f"{V1}/claims/subject/ana/truth").json()["slots"]
    assert [(s["slot"], s["value"], s["confidence"], s["source"]) for s in truth] == [
        ("employer", "Acme", 0.7, "learned"), ("home_city", "Porto", 0.9, "learned")]
    linked = host.get(f"{V1}/memories/{outcome['created'][0]}/claims").json()
    assert [(c["slot"], c["value"]) for c in linked["data"]] == [("home_city", "Porto")]
    extraction_prompt = llm_server.calls_to("")[-1].messages[0]["content"]
    assert '"claims": [{"slot"' in extraction_prompt and "timezone" in extraction_prompt

    # a later turn naming the slot again supersedes it; the earlier value stays as history
    learn_turn(host, llm_server, {"memories": [], "claims": [{"slot": "home_city", "value": "Lisbon"}]}, "c2")
    assert host.get(f"{V1}/claims/subject/ana/slot/home_city").json()["value"] == "Lisbon"
    history = host.get(f"{V1}/claims/subject/ana/history", params={"slot": "home_city"}).json()["data"]
    assert [(c["value"], c["status"]) for c in history] == [("Lisbon", "active"), ("Porto", "superseded")]

    # and recall injects the learned truth where the spec puts subject knowledge: before the memories
    llm_server.script("Lisbon it is.", route="openai")
    complete(host, "Why did I move to Porto?", subject_id="ana", chat_id="c3", recall=True, learn=False,
             history=False)
    system = llm_server.calls_to("openai")[-1].messages[0]["content"]
    assert system == ("Known facts about the user:\n- employer: Acme\n- home_city: Lisbon\n\n"
                      "Relevant memories about the user:\n- User moved to Porto for a new job")


@SQLITE_ONLY
def test_a_bad_slot_is_skipped_visibly_and_learn_false_asserts_nothing(host: TestClient,  # noqa: F811
                                                                       llm_server: ScriptedLLMServer) -> None:
    outcome = learn_turn(host, llm_server, {"memories": [], "claims": [
        {"slot": "home city!", "value": "Porto"}, {"slot": "diet", "value": "vegan"}]}, "c1")
    assert {"slot": "home city!", "reason": "invalid slot name"} in outcome["skipped"]
    assert [s["slot"] for s in host.get(f"{V1}/claims/subject/ana/truth").json()["slots"]] == ["diet"]
    llm_server.script("ok", route="openai")
    complete(host, "I moved to Porto.", subject_id="bo", chat_id="c2", learn=False)
    assert host.get(f"{V1}/claims/subject/bo/truth").json()["slot_count"] == 0
    assert host.get(f"{V1}/chat/learning", params={"chat_id": "c2"}).json()["jobs"] == []  # nothing extracted


@SQLITE_ONLY
def test_the_profile_schema_lists_the_system_fields(host: TestClient) -> None:  # noqa: F811
    schema = host.get(f"{V1}/profiles/schema").json()
    assert [f["key"] for f in schema["fields"]] == ["name", "email", "timezone", "language", "location",
                                                     "occupation"]
    assert all(f["is_system"] and f["type"] == "string" for f in schema["fields"])
    assert schema["custom_fields"] is True and schema["field_key_pattern"].startswith("^")
    custom = host.patch(f"{V1}/profiles", json={"subject_id": "ana", "updates": [{"field_key": "shoe_size",
                                                                                   "value": 38}]})
    assert custom.json()["claims"] == {"shoe_size": 38}  # a key outside the schema is a custom field
