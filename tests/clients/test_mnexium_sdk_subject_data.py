"""Every claims, profile and state method of the official `mnexium` SDK 0.2.2 (unchanged), against the embedded
server on SQLite and on the DynamoDB host (moto), the fixtures of tests/clients/test_mnexium_sdk.py. `COVERED`
lists the methods driven here; a method the SDK has and this list lacks fails the first test, so a missing one is
visible."""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import pytest
from mnexium import AgentStateSetOptions, ClaimCreateOptions, Mnexium, ProviderConfig
from zengram.assembly.containers import build_container
from zengram.embedded.app import build_embedded_app
from zengram.embedded.background import BackgroundServer
from zengram.kernel.ports import Embedder
from zengram.settings import Settings

from tests.api.chat.conftest import OPENAI_KEY, ChatClock
from tests.clients.test_mnexium_sdk import host_settings  # noqa: F401  (a fixture: SQLite and DynamoDB on moto)
from tests.llm_server import ScriptedLLMServer
from tests.support import API_KEY

COVERED = {
    "Mnexium.claims": {"create", "get", "get_by_slot", "list_slots", "retract"},
    "Subject.claims": {"get", "set", "list", "truth", "history", "retract"},
    "Mnexium.state": {"get", "set", "delete"},
    "Subject.state": {"get", "set", "delete"},
    "Subject.profile": {"get", "update", "delete_field"},
}


def sdk_methods(resource: object) -> set[str]:
    return {name for name, _ in inspect.getmembers(type(resource), inspect.isfunction) if not name.startswith("_")}


@pytest.fixture
def clock() -> ChatClock:
    return ChatClock()


@pytest.fixture
def mnx(host_settings: Settings, minilm: Embedder, clock: ChatClock) -> Iterator[Mnexium]:  # noqa: F811
    container = build_container(host_settings, embedder=minilm, clock=clock)
    try:
        with (BackgroundServer(build_embedded_app(host_settings, container)) as server,
              Mnexium(api_key=API_KEY, base_url=f"{server.url}/api/v1", openai=ProviderConfig(api_key=OPENAI_KEY),
                      max_retries=0) as client):
            yield client
    finally:
        container.close()


def test_the_covered_list_is_every_method_of_those_sdk_resources() -> None:
    client = Mnexium(api_key="listing-only", base_url="http://127.0.0.1:9/api/v1", max_retries=0)
    subject = client.subject("alice")
    found = {"Mnexium.claims": sdk_methods(client.claims), "Subject.claims": sdk_methods(subject.claims),
             "Mnexium.state": sdk_methods(client.state), "Subject.state": sdk_methods(subject.state),
             "Subject.profile": sdk_methods(subject.profile)}
    assert found == COVERED


def test_the_sdk_drives_every_claims_method(mnx: Mnexium) -> None:
    alice = mnx.subject("alice")
    # Mnexium.claims: create, get, get_by_slot, list_slots, retract
    lisbon = mnx.claims.create(ClaimCreateOptions(subject_id="alice", slot="home_city", value="Lisbon",
                                                  confidence=0.8, source="onboarding"))
    assert (lisbon["value"], lisbon["confidence"], lisbon["source"], lisbon["status"]) == (
        "Lisbon", 0.8, "onboarding", "active")
    assert mnx.claims.get(lisbon["id"])["claim"]["slot"] == "home_city"
    assert mnx.claims.get_by_slot("alice", "home_city")["value"] == "Lisbon"
    assert mnx.claims.get_by_slot("alice", "nothing") is None

    # Subject.claims: set, get, list, truth, history, retract
    porto = alice.claims.set("home_city", "Porto", confidence=0.9, source="chat")
    assert (porto["slot"], porto["value"], porto["source"]) == ("home_city", "Porto", "chat")
    alice.claims.set("favorite_color", "blue")
    assert alice.claims.get("home_city")["active_claim_id"] == porto["id"]
    assert alice.claims.get("nothing") is None
    truth = alice.claims.truth()
    assert {slot["slot"]: slot["value"] for slot in truth["slots"]} == {"home_city": "Porto",
                                                                       "favorite_color": "blue"}
    listed = alice.claims.list()
    assert (listed["total"], listed["active_count"]) == (3, 2)
    assert [c["id"] for c in listed["slots"]["superseded"]] == [lisbon["id"]]
    assert mnx.claims.list_slots("alice") == listed
    history = alice.claims.history()
    assert [c["value"] for c in history if c["slot"] == "home_city"] == ["Porto", "Lisbon"]

    retracted = alice.claims.retract(porto["id"])
    assert (retracted["restored_previous"], retracted["previous_claim_id"]) == (True, lisbon["id"])
    assert alice.claims.get("home_city")["value"] == "Lisbon"  # the previous value is the truth again
    assert mnx.claims.retract(lisbon["id"]) is None  # the SDK's top-level retract answers nothing
    assert mnx.claims.get_by_slot("alice", "home_city") is None
    assert {c["status"] for c in alice.claims.history() if c["slot"] == "home_city"} == {"retracted"}  # kept


def test_the_sdk_drives_every_state_method_and_ttl_expires(mnx: Mnexium, clock: ChatClock) -> None:
    alice = mnx.subject("alice")
    # Subject.state: set (with ttl_seconds), get, delete
    stored = alice.state.set("task", {"step": 1}, ttl_seconds=60)
    assert (stored["value"], stored["ttl_seconds"]) == ({"step": 1}, 60) and stored["expires_at"] is not None
    assert alice.state.get("task")["ttl_seconds"] == 60
    assert alice.state.get("task")["value"] == {"step": 1}
    clock.advance(seconds=61)
    assert alice.state.get("task") is None  # expired state reads as absent
    assert alice.state.set("notes", ["a"])["ttl_seconds"] is None  # no TTL: kept until deleted
    alice.state.delete("notes")
    assert alice.state.get("notes") is None

    # Mnexium.state: set, get, delete (x-subject-id from the options)
    mnx.state.set(AgentStateSetOptions(key="cart", value={"items": 2}, subject_id="bob", ttl_seconds=30))
    assert mnx.state.get("cart", subject_id="bob")["value"] == {"items": 2}
    assert mnx.state.get("cart", subject_id="alice") is None
    mnx.state.delete("cart", subject_id="bob")
    assert mnx.state.get("cart", subject_id="bob") is None


def test_the_sdk_drives_every_profile_method_and_recall_loads_the_fields(
        mnx: Mnexium, llm_server: ScriptedLLMServer) -> None:
    from mnexium import ProcessOptions

    alice = mnx.subject("alice")
    # Subject.profile: update, get, delete_field
    updated = alice.profile.update([{"field_key": "timezone", "value": "Europe/Lisbon"},
                                    {"field_key": "name", "value": "Alice"}])
    assert updated["claims"] == {"name": "Alice", "timezone": "Europe/Lisbon"}
    alice.profile.update([{"field_key": "timezone", "value": "Europe/Porto"}])
    profile = alice.profile.get()
    assert (profile["subject_id"], profile["claims"]) == ("alice", {"name": "Alice", "timezone": "Europe/Porto"})
    assert {f["field_key"]: f["source"] for f in profile["fields"]} == {"name": "profile", "timezone": "profile"}
    assert [c["value"] for c in alice.claims.history() if c["slot"] == "timezone"] == [
        "Europe/Porto", "Europe/Lisbon"]  # a field's earlier values are kept, as a claim's
    assert alice.profile.delete_field("name") is None
    assert alice.profile.get()["claims"] == {"timezone": "Europe/Porto"}

    llm_server.script("It is morning in Porto.", route="openai")
    mnx.process(ProcessOptions(content="What time zone am I in?", subject_id="alice", recall=True, learn=False,
                               history=False, system_prompt=False))
    assert llm_server.calls_to("openai")[-1].messages[0] == {
        "role": "system", "content": "Known facts about the user:\n- timezone: Europe/Porto"}
