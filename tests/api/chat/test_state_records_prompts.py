"""Agent state (TTL), records (JSON Schema validation, query, search), system prompts (CRUD, resolution by scope),
and what the layer does not offer (a 501 `{"error"}`, never a crash)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.api.chat.conftest import ChatClock
from tests.api.helpers import assert_error
from tests.support import API_KEY

ALICE = {"x-subject-id": "alice"}


def test_state_lives_until_its_ttl_and_per_subject(api: TestClient, chat_clock: ChatClock) -> None:
    put = api.put("/api/v1/state/current_task", headers=ALICE, json={"value": {"step": 3}, "ttl_seconds": 60})
    assert put.status_code == 200
    assert put.json()["value"] == {"step": 3} and put.json()["ttl"] == put.json()["expires_at"] is not None
    assert api.get("/api/v1/state/current_task", headers=ALICE).json()["value"] == {"step": 3}
    assert_error(api.get("/api/v1/state/current_task", headers={"x-subject-id": "bob"}), 404)
    chat_clock.advance(seconds=61)
    assert_error(api.get("/api/v1/state/current_task", headers=ALICE), 404)
    api.put("/api/v1/state/notes", headers=ALICE, json={"value": ["a", None, 1.5]})
    assert api.delete("/api/v1/state/notes", headers=ALICE).json() == {"ok": True, "deleted": True}
    assert_error(api.delete("/api/v1/state/notes", headers=ALICE), 404)
    assert assert_error(api.get("/api/v1/state/notes"), 400).startswith("x-subject-id:")


def test_state_values_are_bounded(api: TestClient) -> None:
    huge = {"value": "x" * 70_000}
    assert assert_error(api.put("/api/v1/state/big", headers=ALICE, json=huge), 400).startswith("value:")
    deep: object = 1
    for _ in range(9):
        deep = [deep]
    assert "at most 8 levels" in assert_error(api.put("/api/v1/state/deep", headers=ALICE, json={"value": deep}), 400)


DEAL = {"title": {"type": "string", "required": True}, "value": {"type": "number", "minimum": 0},
        "stage": {"type": "string", "enum": ["open", "won", "lost"]}}


def test_records_are_validated_against_their_schema(api: TestClient) -> None:
    schema = api.post("/api/v1/records/schemas", json={"type_name": "deal", "fields": DEAL, "description": "Deals"})
    assert schema.status_code == 200
    assert schema.json()["json_schema"]["required"] == ["title"]
    for data, field in [({"value": 5}, "data.title"), ({"title": "X", "value": -1}, "data.value"),
                        ({"title": "X", "stage": "maybe"}, "data.stage"), ({"title": "X", "owner": "me"},
                                                                           "data.owner")]:
        assert assert_error(api.post("/api/v1/records/deal", json={"data": data}), 400).startswith(f"{field}:")
    assert "not found" in assert_error(api.post("/api/v1/records/ticket", json={"data": {}}), 404)
    bad_schema = api.post("/api/v1/records/schemas", json={"type_name": "x", "fields": {
        "code": {"type": "string", "pattern": "([unclosed"}}})
    assert assert_error(bad_schema, 400).startswith("fields.code: not valid JSON Schema")
    backreference = api.post("/api/v1/records/schemas", json={"type_name": "x", "fields": {
        "code": {"type": "string", "pattern": r"^(a)\1$"}}})
    assert assert_error(backreference, 400).startswith("fields.code: pattern '^(a)\\\\1$' is not supported")
    evil = api.post("/api/v1/records/schemas", json={"type_name": "evil", "fields": {
        "code": {"type": "string", "pattern": "^(a+)+$"}}})
    assert evil.status_code == 200  # RE2 runs it in linear time: 40 `a`s and a `!` answer at once
    assert "does not match" in assert_error(api.post("/api/v1/records/evil", json={"data": {"code": "a" * 40 + "!"}}),
                                            400)
    assert assert_error(api.post("/api/v1/records/schemas", json={"type_name": "schemas", "fields": DEAL}),
                        400) == "type_name: 'schemas' is reserved"
    assert assert_error(api.post("/api/v1/records/schemas", json={"type_name": "x", "fields": {
        "a": {"type": "currency"}}}), 400).startswith("fields.a.type:")


def test_records_crud_query_and_search(api: TestClient) -> None:
    api.post("/api/v1/records/schemas", json={"type_name": "deal", "fields": DEAL})
    made = {title: api.post("/api/v1/records/deal", json={"data": {"title": title, "value": value, "stage": stage}})
            .json() for title, value, stage in [("Enterprise renewal", 250000, "open"), ("Starter plan", 900, "won"),
                                                 ("Consulting", 40000, "won")]}
    renewal = made["Enterprise renewal"]
    assert renewal["record_id"].startswith("rec_") and renewal["visibility"] == "public"
    updated = api.put(f"/api/v1/records/deal/{renewal['record_id']}", json={"data": {"stage": "won"}}).json()
    assert updated["data"] == {"title": "Enterprise renewal", "value": 250000, "stage": "won"}
    assert assert_error(api.put(f"/api/v1/records/deal/{renewal['record_id']}", json={"data": {"title": None}}),
                        400).startswith("data.title:")
    query = api.post("/api/v1/records/deal/query", json={"where": {"stage": "won"}, "order_by": "-value",
                                                          "limit": 2}).json()
    assert [r["data"]["title"] for r in query["records"]] == ["Enterprise renewal", "Consulting"]
    hits = api.post("/api/v1/records/deal/search", json={"query": "enterprise renewal", "limit": 1}).json()
    assert [h["record_id"] for h in hits["records"]] == [renewal["record_id"]] and hits["records"][0]["similarity"] > 0
    assert api.delete(f"/api/v1/records/deal/{renewal['record_id']}").json() == {"ok": True, "deleted": True}
    assert_error(api.get(f"/api/v1/records/deal/{renewal['record_id']}"), 404)
    assert [r["data"]["title"] for r in api.post("/api/v1/records/deal/query", json={}).json()["records"]] == [
        "Consulting", "Starter plan"]
    assert [s["type_name"] for s in api.get("/api/v1/records/schemas").json()["schemas"]] == ["deal"]


def test_prompts_resolve_project_then_subject_then_chat(api: TestClient) -> None:
    def create(**body: object) -> str:
        response = api.post("/api/v1/prompts", json={"prompt_text": str(body["name"]), "is_default": True, **body})
        assert response.status_code == 201, response.text
        prompt_id: str = response.json()["prompt"]["id"]
        return prompt_id

    chat = create(name="chat", scope="chat", scope_id="c1")
    create(name="late", priority=200)
    create(name="subject", scope="subject", scope_id="alice")
    early = create(name="early", priority=10)
    resolved = api.get("/api/v1/prompts/resolve", params={"subject_id": "alice", "chat_id": "c1"}).json()
    assert [p["name"] for p in resolved["prompts"]] == ["early", "late", "subject", "chat"]
    assert resolved["prompt_text"] == "early\n\nlate\n\nsubject\n\nchat" and resolved["count"] == 4
    assert [p["name"] for p in api.get("/api/v1/prompts/resolve").json()["prompts"]] == ["early", "late"]
    patched = api.patch(f"/api/v1/prompts/{early}", json={"is_active": False, "prompt_text": "changed"})
    assert patched.json()["prompt"]["prompt_text"] == "changed"
    assert [p["name"] for p in api.get("/api/v1/prompts/resolve").json()["prompts"]] == ["late"]
    assert api.delete(f"/api/v1/prompts/{chat}").json()["deleted"] is True
    assert_error(api.get(f"/api/v1/prompts/{chat}"), 404)
    assert len(api.get("/api/v1/prompts").json()["prompts"]) == 3
    assert assert_error(api.post("/api/v1/prompts", json={"name": "n", "prompt_text": "t", "scope": "subject"}),
                        400).startswith("scope_id: required")


def test_what_the_layer_does_not_offer_is_a_501(api: TestClient) -> None:
    from zengram.kernel.keys import Role

    reader = api.post("/admin/keys", headers={"x-api-key": API_KEY}, json={
        "name": "reader", "role": Role.READ.value, "clients": ["global"]}).json()["key"]
    for method, path in [("GET", "/integrations"), ("POST", "/integrations/int_1/sync")]:
        response = api.request(method, f"/api/v1{path}", headers={"x-mnexium-key": reader})
        assert response.status_code == 501 and response.json()["error"].endswith(
            "not supported by this server (docs/chat.md lists what the chat layer offers)"), (method, path)
        assert api.request(method, f"/api/v1{path}", headers={"x-mnexium-key": "wrong"}).status_code == 401
