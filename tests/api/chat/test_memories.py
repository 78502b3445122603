"""Subject memories: semantic versioning on create (semantics.md, with the real embedder), restore, edit, forget,
visibility across subjects, and search ranked by relevance × confidence × decay × importance."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from zengram.assembly.containers import Container

from tests.api.chat.conftest import ChatClock
from tests.api.helpers import assert_error


def add(api: TestClient, text: str, subject: str = "alice", expect: int = 201, **fields: Any) -> dict[str, Any]:
    response = api.post("/api/v1/memories", json={"subject_id": subject, "text": text, **fields})
    assert response.status_code == expect, response.text
    body: dict[str, Any] = response.json()
    return body


def active_texts(api: TestClient, subject: str = "alice") -> list[str]:
    return sorted(m["text"] for m in api.get("/api/v1/memories", params={"subject_id": subject}).json()["data"])


def test_skip_supersede_and_create_as_the_spec_says(api: TestClient) -> None:
    coffee = add(api, "User likes coffee")
    assert coffee["created"] is True and coffee["memory"]["status"] == "active"
    skipped = add(api, "User enjoys coffee", expect=200)  # similarity 92.6: the same meaning
    assert (skipped["created"], skipped["skipped"], skipped["reason"], skipped["id"]) == (False, True, "duplicate",
                                                                                          None)
    assert skipped["duplicate_of"] == coffee["id"] and skipped["similarity"] >= 85
    blueberry = add(api, "Favorite fruit is blueberry")
    apple = add(api, "Favorite fruit is apple")  # similarity 80.8, same kind: the old one is superseded
    assert apple["superseded_ids"] == [blueberry["id"]] and apple["superseded_count"] == 1
    remote = add(api, "User works remotely")  # another topic: both stay
    assert remote["superseded_count"] == 0
    assert active_texts(api) == ["Favorite fruit is apple", "User likes coffee", "User works remotely"]
    old = api.get(f"/api/v1/memories/{blueberry['id']}").json()
    assert (old["status"], old["superseded_by"]) == ("superseded", apple["id"])
    superseded = api.get("/api/v1/memories/superseded", params={"subject_id": "alice"}).json()["data"]
    assert [m["id"] for m in superseded] == [blueberry["id"]]


def test_only_the_same_kind_is_superseded_and_no_supersede_turns_versioning_off(api: TestClient) -> None:
    blue = add(api, "User's favorite color is blue", kind="preference")
    green = add(api, "User's favorite color is green", kind="fact")  # 82.5 but another kind
    assert green["superseded_count"] == 0
    exact = add(api, "User's favorite color is blue", kind="preference", no_supersede=True, expect=200)
    assert exact["duplicate_of"] == blue["id"]  # even off, an active memory's exact text is never stored twice
    near = add(api, "User's favorite colour is blue", kind="preference", no_supersede=True)
    assert near["created"] and near["versioning"] == "off"
    assert len(active_texts(api)) == 3


def test_restore_makes_a_superseded_memory_active_again(api: TestClient) -> None:
    berlin = add(api, "User lives in Berlin")
    lisbon = add(api, "User lives in Lisbon")  # 64.9: supersedes Berlin
    assert lisbon["superseded_ids"] == [berlin["id"]]
    restored = api.post(f"/api/v1/memories/{berlin['id']}/restore").json()
    assert (restored["ok"], restored["restored"], restored["text"]) == (True, True, "User lives in Berlin")
    assert api.get(f"/api/v1/memories/{berlin['id']}").json()["status"] == "active"
    again = api.post(f"/api/v1/memories/{berlin['id']}/restore").json()
    assert (again["restored"], again["message"]) == (False, "Memory is already active")
    assert active_texts(api) == ["User lives in Berlin", "User lives in Lisbon"]
    assert api.delete(f"/api/v1/memories/{berlin['id']}").json() == {"ok": True, "deleted": True}
    assert "deleted" in assert_error(api.post(f"/api/v1/memories/{berlin['id']}/restore"), 409)
    assert_error(api.get(f"/api/v1/memories/{berlin['id']}"), 404)
    assert api.delete(f"/api/v1/memories/{berlin['id']}").json() == {"ok": True, "deleted": False}


def test_editing_an_inferred_memory_makes_it_corrected_and_reindexes_it(api: TestClient,
                                                                        chat_container: Container) -> None:
    created = add(api, "User drives a red car", source="inferred", tags=["car"], metadata={"from": "test"})
    patched = api.patch(f"/api/v1/memories/{created['id']}", json={"text": "User drives a green bike",
                                                                    "importance": 90})
    assert patched.status_code == 200
    memory = patched.json()["memory"]
    assert (memory["text"], memory["source"], memory["importance"], memory["tags"]) == (
        "User drives a green bike", "corrected", 90, ["car"])
    hits = api.get("/api/v1/memories/search", params={"subject_id": "alice", "q": "bike"}).json()["data"]
    assert [h["id"] for h in hits] == [created["id"]]
    assert chat_container.chat.memory_index.repair() == 0  # nothing was left pending


def test_other_labels_of_source_are_kept_in_metadata(api: TestClient) -> None:
    memory = add(api, "User prefers dark mode", source="settings")["memory"]
    assert memory["source"] == "explicit" and memory["metadata"] == {"source_label": "settings"}


def test_private_memories_stay_with_their_subject_and_shared_ones_reach_everyone(api: TestClient) -> None:
    add(api, "Alice's locker code is 4411", subject="alice")
    add(api, "The office closes at 6pm on Fridays", subject="alice", visibility="shared")
    for_bob = api.get("/api/v1/memories/search", params={"subject_id": "bob", "q": "locker code office"}).json()
    assert [hit["text"] for hit in for_bob["data"]] == ["The office closes at 6pm on Fridays"]
    for_alice = api.get("/api/v1/memories/search", params={"subject_id": "alice", "q": "locker code"}).json()
    assert for_alice["data"][0]["text"] == "Alice's locker code is 4411"
    assert api.get("/api/v1/memories", params={"subject_id": "bob"}).json()["data"] == []


def test_search_ranks_by_relevance_confidence_decay_and_importance(api: TestClient, chat_clock: ChatClock) -> None:
    strong = add(api, "User is allergic to peanuts", importance=100, confidence=1.0)["id"]
    weak = add(api, "User was allergic to peanuts as a child", importance=0, confidence=0.3, is_temporal=True,
               no_supersede=True)["id"]
    hits = api.get("/api/v1/memories/search", params={"subject_id": "alice", "q": "peanut allergy"}).json()["data"]
    assert [hit["id"] for hit in hits] == [strong, weak]
    assert hits[0]["score"] > hits[1]["score"] and all(0 < hit["score"] <= hit["relevance"] for hit in hits)
    before = hits[1]["score"]
    chat_clock.advance(days=30)  # temporal memories fade faster than permanent ones
    later = {h["id"]: h for h in api.get("/api/v1/memories/search",
                                          params={"subject_id": "alice", "q": "peanut allergy"}).json()["data"]}
    assert later[weak]["score"] < before * 0.9**29 and later[strong]["score"] > hits[0]["score"] * 0.98**31
    floor = api.get("/api/v1/memories/search", params={"subject_id": "alice", "q": "peanut allergy",
                                                       "min_score": later[strong]["score"] * 100 - 0.01}).json()
    assert [hit["id"] for hit in floor["data"]] == [strong]


def test_another_projects_memory_does_not_exist_here(api: TestClient) -> None:
    created = add(api, "A global note")
    from tests.support import API_KEY

    other = {"x-mnexium-key": API_KEY, "x-mnx-project-id": "acme"}
    assert_error(api.get(f"/api/v1/memories/{created['id']}", headers=other), 404)
    assert_error(api.patch(f"/api/v1/memories/{created['id']}", headers=other, json={"importance": 1}), 404)
    assert api.get(f"/api/v1/memories/{created['id']}").status_code == 200


def test_versioning_and_writes_go_on_while_the_index_is_down(api: TestClient, chat_container: Container,
                                                             monkeypatch: Any) -> None:
    from zengram.kernel.errors import IndexUnavailable

    add(api, "User likes coffee")

    def down(*_: object, **__: object) -> None:
        raise IndexUnavailable("the search index is unavailable: test")

    for operation in ("vector_search", "keyword_search", "upsert"):
        monkeypatch.setattr(chat_container.index, operation, down)
    skipped = add(api, "User enjoys coffee", expect=200)  # compared with the stored memories instead
    assert skipped["versioning"].startswith("index unavailable")
    stored = add(api, "User works remotely")
    assert stored["created"] is True
    assert_error(api.get("/api/v1/memories/search", params={"subject_id": "alice", "q": "coffee"}), 503)
    monkeypatch.undo()
    assert chat_container.chat.repair_index() == 1  # the memory stored meanwhile reaches the index
    hits = api.get("/api/v1/memories/search", params={"subject_id": "alice", "q": "remote work"}).json()["data"]
    assert hits[0]["id"] == stored["id"]


def test_bad_input_names_the_field(api: TestClient) -> None:
    assert assert_error(api.post("/api/v1/memories", json={"subject_id": "a", "text": "  "}), 400).startswith("text:")
    assert assert_error(api.post("/api/v1/memories", json={"subject_id": "a", "text": "x", "importance": 101}),
                        400).startswith("importance:")
    assert assert_error(api.post("/api/v1/memories", json={"text": "x"}), 400).startswith("subject_id:")
    assert assert_error(api.get("/api/v1/memories", params={"subject_id": "a b"}), 400).startswith("subject_id:")
    assert assert_error(api.post("/api/v1/memories", json={"subject_id": "a", "text": "x", "kind": "opinion"}),
                        400).startswith("kind:")


def test_a_boolean_is_no_number(api: TestClient) -> None:
    """Pydantic's lax mode read `true` as 1 (the schema fuzzer's finding): a number field refuses it, and nothing
    is stored."""
    for field in ("confidence", "importance"):
        body = {"subject_id": "a", "text": "Booleans are not numbers", field: True}
        assert assert_error(api.post("/api/v1/memories", json=body), 400).startswith(f"{field}:")
    assert active_texts(api, "a") == []
    policy = {"name": "p", "policy_text": "", "config": {"recall_limit": False}}
    assert "recall_limit" in assert_error(api.post("/api/v1/memory/policies", json=policy), 400)

