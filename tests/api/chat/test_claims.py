"""Claims over HTTP: asserting supersedes a slot's value and keeps its history, the truth of every slot, retraction
restoring the previous truth, validity windows, scrubbing, bad input as 400, and the truth injected into a
completion with recall on (beside the memories, in the system message)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi.testclient import TestClient

from tests.api.chat.conftest import ChatClock, complete
from tests.api.helpers import assert_error
from tests.llm_server import ScriptedLLMServer

V1 = "/api/v1"


def claim(api: TestClient, subject: str, slot: str, value: Any, **fields: Any) -> dict[str, Any]:
    response = api.post(f"{V1}/claims", json={"subject_id": subject, "slot": slot, "value": value, **fields})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def test_setting_a_slot_supersedes_its_value_and_keeps_the_history(api: TestClient) -> None:
    lisbon = claim(api, "alice", "home_city", "Lisbon", confidence=0.6, source="chat")
    assert (lisbon["status"], lisbon["claim_id"], lisbon["object_value"]) == ("active", lisbon["id"], "Lisbon")
    porto = api.post(f"{V1}/claims", json={"subject_id": "alice", "predicate": "home_city", "object_value": "Porto",
                                          "source_type": "user"}).json()  # the subject SDK's spelling
    assert (porto["slot"], porto["value"], porto["source"], porto["confidence"]) == ("home_city", "Porto", "user", 1.0)

    slot = api.get(f"{V1}/claims/subject/alice/slot/home_city").json()
    assert (slot["active_claim_id"], slot["value"]) == (porto["id"], "Porto")
    detail = api.get(f"{V1}/claims/{lisbon['id']}").json()
    assert (detail["claim"]["status"], detail["claim"]["superseded_by"]) == ("superseded", porto["id"])
    assert detail["supersession_chain"] == [{"edge_type": "supersedes", "from_claim_id": porto["id"],
                                             "to_claim_id": lisbon["id"]}]
    history = api.get(f"{V1}/claims/subject/alice/history", params={"slot": "home_city"}).json()
    assert [c["value"] for c in history["data"]] == ["Porto", "Lisbon"] and history["total_claims"] == 2
    assert [c["value"] for c in history["by_slot"]["home_city"]] == ["Lisbon", "Porto"]


def test_truth_answers_every_slot_and_retract_restores_the_previous_value(api: TestClient) -> None:
    claim(api, "alice", "diet", "vegan")
    claim(api, "alice", "diet", "vegetarian")
    color = claim(api, "alice", "favorite_color", {"primary": "blue"})
    claim(api, "bob", "diet", "omnivore")
    truth = api.get(f"{V1}/claims/subject/alice/truth").json()
    assert truth["slot_count"] == 2
    assert {s["slot"]: s["value"] for s in truth["slots"]} == {"diet": "vegetarian",
                                                               "favorite_color": {"primary": "blue"}}

    vegetarian = api.get(f"{V1}/claims/subject/alice/slot/diet").json()["active_claim_id"]
    retracted = api.post(f"{V1}/claims/{vegetarian}/retract", json={"reason": "said by mistake"}).json()
    assert retracted["restored_previous"] is True and retracted["reason"] == "said by mistake"
    assert api.get(f"{V1}/claims/subject/alice/slot/diet").json()["value"] == "vegan"
    kept = api.get(f"{V1}/claims/{vegetarian}").json()["claim"]  # the record is kept
    assert (kept["status"], kept["retract_reason"]) == ("retracted", "said by mistake") and kept["retracted_at"]
    again = api.post(f"{V1}/claims/{vegetarian}/retract").json()  # retracting twice changes nothing
    assert (again["restored_previous"], again["reason"]) == (False, "said by mistake")

    api.post(f"{V1}/claims/{color['id']}/retract")
    assert_error(api.get(f"{V1}/claims/subject/alice/slot/favorite_color"), 404)
    slots = api.get(f"{V1}/claims/subject/alice/slots").json()
    assert (slots["total"], slots["active_count"]) == (3, 1)
    assert [c["value"] for c in slots["slots"]["active"]] == ["vegan"]
    assert len(slots["slots"]["other"]) == 2 and slots["slots"]["superseded"] == []
    graph = api.get(f"{V1}/claims/subject/alice/graph").json()
    assert (graph["claims_count"], graph["edges_count"]) == (3, 0)


def test_a_claim_counts_only_within_its_validity_window(api: TestClient, chat_clock: ChatClock) -> None:
    claim(api, "alice", "plan", "free")
    trial = claim(api, "alice", "plan", "trial", valid_until=(chat_clock.now() + timedelta(days=30)).isoformat())
    assert api.get(f"{V1}/claims/subject/alice/slot/plan").json()["active_claim_id"] == trial["id"]
    chat_clock.advance(days=31)
    assert api.get(f"{V1}/claims/subject/alice/slot/plan").json()["value"] == "free"
    assert api.get(f"{V1}/claims/{trial['id']}").json()["claim"]["status"] == "inactive"


def test_bad_claims_are_400_and_unknown_ones_404(api: TestClient) -> None:
    for body, field in [({"slot": "x", "value": 1}, "subject_id"), ({"subject_id": "a", "value": 1}, "slot"),
                        ({"subject_id": "a", "slot": "x"}, "value"), ({"subject_id": "a", "slot": "bad slot",
                                                                      "value": 1}, "slot"),
                        ({"subject_id": "a", "slot": "x", "value": 1, "confidence": 2}, "confidence"),
                        ({"subject_id": "a", "slot": "x", "value": 1, "valid_from": "2026-01-01T00:00:00"},
                         "valid_from"),
                        ({"subject_id": "a", "slot": "x", "value": 1, "valid_from": "2026-02-01T00:00:00Z",
                          "valid_until": "2026-01-01T00:00:00Z"}, "valid_until")]:
        assert assert_error(api.post(f"{V1}/claims", json=body), 400).startswith(f"{field}"), body
    assert_error(api.get(f"{V1}/claims/clm_unknown"), 404)
    assert_error(api.post(f"{V1}/claims/clm_unknown/retract"), 404)
    assert_error(api.get(f"{V1}/claims/subject/alice/slot/nothing"), 404)
    assert api.get(f"{V1}/claims/subject/nobody/truth").json()["slot_count"] == 0


def test_free_text_is_scrubbed_before_it_is_kept(api: TestClient) -> None:
    secret = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
    made = claim(api, "fay", "github", f"token {secret}", source=f"pasted {secret}")
    assert secret not in str(made) and "[REDACTED:github-token:" in made["value"]
    retracted = api.post(f"{V1}/claims/{made['id']}/retract", json={"reason": f"leaked {secret}"}).json()
    assert secret not in retracted["reason"]


def test_a_memorys_claims_name_it_as_their_source(api: TestClient) -> None:
    memory = api.post(f"{V1}/memories", json={"subject_id": "alice", "text": "Alice moved to Porto"}).json()
    linked = claim(api, "alice", "home_city", "Porto", source_memory_id=memory["id"])
    claim(api, "alice", "diet", "vegan")
    listed = api.get(f"{V1}/memories/{memory['id']}/claims").json()
    assert (listed["count"], [c["id"] for c in listed["data"]]) == (1, [linked["id"]])
    assert_error(api.get(f"{V1}/memories/mem_unknown/claims"), 404)


def test_recall_injects_the_truth_of_the_subjects_claims(api: TestClient, llm_server: ScriptedLLMServer) -> None:
    claim(api, "alice", "home_city", "Lisbon")
    claim(api, "alice", "home_city", "Porto")
    claim(api, "alice", "allergies", ["peanuts"])
    api.post(f"{V1}/memories", json={"subject_id": "alice", "text": "Alice likes hiking near Porto"})
    llm_server.script("Try the Douro trails.", route="openai")
    complete(api, "Where should I go hiking near Porto?", subject_id="alice", recall=True, learn=False,
             history=False, system_prompt=False)
    system = llm_server.calls_to("openai")[-1].messages[0]
    assert system == {"role": "system", "content": "Known facts about the user:\n- allergies: [\"peanuts\"]\n"
                                                   "- home_city: Porto\n\nRelevant memories about the user:\n"
                                                   "- Alice likes hiking near Porto"}
    llm_server.script("Hello.", route="openai")
    complete(api, "Hi", subject_id="alice", recall=False, learn=False, history=False, system_prompt=False)
    assert llm_server.calls_to("openai")[-1].messages == [{"role": "user", "content": "Hi"}]  # recall off: none


def test_profile_fields_are_claims_of_the_subject(api: TestClient) -> None:
    updated = api.patch(f"{V1}/profiles", json={"subject_id": "alice", "updates": [
        {"field_key": "timezone", "value": "UTC"}, {"field_key": "plan", "value": {"tier": "pro"}, "confidence": 0.5}]})
    assert updated.status_code == 200 and updated.json()["claims"] == {"plan": {"tier": "pro"}, "timezone": "UTC"}
    claim(api, "alice", "timezone", "Europe/Lisbon")  # a claim of the same slot is the same field
    assert api.get(f"{V1}/profiles", params={"subject_id": "alice"}).json()["data"]["timezone"] == "Europe/Lisbon"
    deleted = api.delete(f"{V1}/profiles", params={"subject_id": "alice", "field_key": "timezone"}).json()
    assert (deleted["deleted"], deleted["retracted_claims"]) == (True, 2)
    assert api.get(f"{V1}/profiles", params={"subject_id": "alice"}).json()["claims"] == {"plan": {"tier": "pro"}}
    assert_error(api.delete(f"{V1}/profiles", params={"subject_id": "alice", "field_key": "timezone"}), 404)
    for body, field in [({"subject_id": "alice", "updates": []}, "updates"),
                        ({"subject_id": "alice", "updates": [{"field_key": "bad key", "value": 1}]}, "updates"),
                        ({"updates": [{"field_key": "x", "value": 1}]}, "subject_id")]:
        assert assert_error(api.patch(f"{V1}/profiles", json=body), 400).startswith(field), body
    assert_error(api.get(f"{V1}/profiles"), 400)


def test_the_subject_graph_history_and_slots_take_core_mnx_limits(api: TestClient) -> None:
    lisbon, porto, faro = (claim(api, "gil", "home_city", city) for city in ("Lisbon", "Porto", "Faro"))
    graph = api.get(f"{V1}/claims/subject/gil/graph").json()
    assert (graph["claims_count"], graph["edges_count"], graph["edges_by_type"]) == (3, 2, {"supersedes": 2})
    cut = api.get(f"{V1}/claims/subject/gil/graph", params={"limit": 2}).json()
    assert [c["id"] for c in cut["claims"]] == [porto["id"], faro["id"]]  # the two newest
    assert {(e["from_claim_id"], e["to_claim_id"]) for e in cut["edges"]} == {
        (faro["id"], porto["id"]), (porto["id"], lisbon["id"])}  # every edge touching one of them, as core-mnx
    history = api.get(f"{V1}/claims/subject/gil/history", params={"limit": 1}).json()
    assert [c["id"] for c in history["data"]] == [faro["id"]]
    assert api.get(f"{V1}/claims/subject/gil/slots", params={"limit": 2}).json()["total"] == 2
    assert_error(api.get(f"{V1}/claims/subject/gil/graph", params={"limit": 201}), 400)
    assert_error(api.get(f"{V1}/claims/subject/gil/history", params={"limit": 0}), 400)


def test_profile_true_loads_the_fields_without_recall(api: TestClient, llm_server: ScriptedLLMServer) -> None:
    api.patch(f"{V1}/profiles", json={"subject_id": "hal", "updates": [{"field_key": "timezone", "value": "UTC"}]})
    api.post(f"{V1}/memories", json={"subject_id": "hal", "text": "Hal works nights in UTC"})
    llm_server.script("ok", "ok", route="openai")
    complete(api, "What time is it for me?", subject_id="hal", profile=True, recall=False, learn=False, history=False,
             system_prompt=False)
    assert llm_server.calls_to("openai")[-1].messages[0] == {
        "role": "system", "content": "Known facts about the user:\n- timezone: UTC"}  # the fields, no memories
    complete(api, "What time is it for me?", subject_id="hal", profile=False, recall=False, learn=False,
             history=False, system_prompt=False)
    assert llm_server.calls_to("openai")[-1].messages == [{"role": "user", "content": "What time is it for me?"}]
