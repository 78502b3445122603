"""Learning never blocks the reply: jobs are stored, run by the worker, versioned into memories (and upserted into
records), retried when they fail, visible all along, and not lost to a restart."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from zengram.assembly.containers import Container, build_container
from zengram.chat.domain.learning import LearningJob, LearnMode
from zengram.embedded.app import build_embedded_app
from zengram.kernel.ports import Embedder
from zengram.settings import Settings

from tests.api.chat.conftest import ChatClock, complete, wait_for_learning
from tests.llm_server import Delayed, HttpFailure, ScriptedLLMServer
from tests.support import API_KEY

FAVORITE = {"memories": [{"text": "User's favorite color is blue", "kind": "preference", "importance": 80,
                          "confidence": 0.9}]}


def memories_of(api: TestClient, subject: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = api.get("/api/v1/memories", params={"subject_id": subject}).json()["data"]
    return found


def test_a_learned_memory_is_recalled_in_a_new_chat(api: TestClient, llm_server: ScriptedLLMServer) -> None:
    llm_server.script(Delayed(FAVORITE, 0.5))  # the extraction answers only after the reply went out
    llm_server.script("Noted!", route="openai")
    body = complete(api, "My favorite color is blue.", subject_id="ann", chat_id="first")
    assert body["mnx"]["learning"]["status"] == "pending"
    jobs = wait_for_learning(api, "first")
    assert [(job["status"], job["attempts"]) for job in jobs] == [("done", 1)]
    learned = memories_of(api, "ann")
    assert [(m["text"], m["kind"], m["source"], m["chat_id"], m["importance"]) for m in learned] == [
        ("User's favorite color is blue", "preference", "inferred", "first", 80)]
    extraction = llm_server.calls_to("")[-1].messages
    assert "user: My favorite color is blue.\nassistant: Noted!" in extraction[-1]["content"]
    trace = api.get("/api/v1/chat/trace", params={"chat_id": "first"}).json()["events"]
    assert trace[0]["learning"]["status"] == "done" and trace[0]["learning"]["created"] == [learned[0]["id"]]

    llm_server.script("Blue.", route="openai")
    complete(api, "What is my favorite color?", subject_id="ann", chat_id="second", recall=True, learn=False)
    assert llm_server.calls_to("openai")[-1].messages[0] == {
        "role": "system", "content": "Relevant memories about the user:\n- User's favorite color is blue"}


def test_learning_versions_what_it_extracts(api: TestClient, llm_server: ScriptedLLMServer) -> None:
    llm_server.script({"memories": [{"text": "Favorite fruit is blueberry"}, {"text": "User likes coffee"}]},
                      {"memories": [{"text": "Favorite fruit is apple"}, {"text": "User enjoys coffee"}]})
    llm_server.default("ok", route="openai")
    complete(api, "I like blueberries and coffee", subject_id="bo", chat_id="b")
    wait_for_learning(api, "b")
    complete(api, "Actually apples now, and coffee", subject_id="bo", chat_id="b")
    outcome = wait_for_learning(api, "b")[0]["outcome"]
    assert [s["text"] for s in outcome["skipped"]] == ["User enjoys coffee"]
    assert len(outcome["created"]) == 1 and len(outcome["superseded"]) == 1
    assert sorted(m["text"] for m in memories_of(api, "bo")) == ["Favorite fruit is apple", "User likes coffee"]


def test_force_keeps_the_users_words_when_nothing_is_extracted(api: TestClient, llm_server: ScriptedLLMServer) -> None:
    llm_server.script({"memories": []})
    llm_server.script("ok", route="openai")
    complete(api, "Remember that the gate code changes monthly.", subject_id="cy", chat_id="f", learn="force")
    wait_for_learning(api, "f")
    assert [(m["text"], m["kind"]) for m in memories_of(api, "cy")] == [
        ("Remember that the gate code changes monthly.", "note")]
    assert "always learn" in llm_server.calls_to("")[-1].messages[0]["content"]


def test_a_failing_extraction_is_retried_then_shown_failed_until_retried(api: TestClient,
                                                                         llm_server: ScriptedLLMServer) -> None:
    llm_server.script(*[HttpFailure(500, "model overloaded")] * 3)
    llm_server.script("ok", route="openai")
    complete(api, "I moved to Berlin", subject_id="di", chat_id="d")
    [job] = wait_for_learning(api, "d")
    assert (job["status"], job["attempts"]) == ("failed", 3) and "model overloaded" in job["last_error"]
    failed = api.get("/api/v1/chat/learning", params={"status": "failed"}).json()["jobs"]
    assert [j["id"] for j in failed] == [job["id"]]
    event = api.get("/api/v1/chat/trace", params={"chat_id": "d"}).json()["events"][0]
    assert event["learning"]["status"] == "failed" and "model overloaded" in event["learning"]["error"]
    assert memories_of(api, "di") == []

    llm_server.script({"memories": [{"text": "User lives in Berlin"}]})
    retried = api.post(f"/api/v1/chat/learning/{job['id']}/retry")
    assert retried.status_code == 200 and retried.json()["status"] == "pending"
    assert [(j["status"], j["attempts"]) for j in wait_for_learning(api, "d")] == [("done", 1)]
    assert [m["text"] for m in memories_of(api, "di")] == ["User lives in Berlin"]
    assert api.post(f"/api/v1/chat/learning/{job['id']}/retry").status_code == 409  # only a failed job


def test_records_learn_in_sync_and_report_what_they_wrote(api: TestClient, llm_server: ScriptedLLMServer) -> None:
    assert api.post("/api/v1/records/schemas", json={"type_name": "order", "fields": {
        "item": {"type": "string", "required": True}, "quantity": {"type": "integer"}}}).status_code == 200
    llm_server.script({"memories": []}, {"records": [{"type_name": "order", "data": {"item": "pizza", "quantity": 2,
                                                                                       "colour": "dropped"}},
                                                     {"type_name": "order", "data": {"quantity": 1}},
                                                     {"type_name": "invoice", "data": {"x": 1}}]})
    llm_server.script("Ordered.", route="openai")
    body = complete(api, "Two pizzas please", subject_id="ed", chat_id="o",
                    records={"learn": "force", "sync": True, "tables": ["order"]})
    report = body["mnx"]["records"]
    assert report["status"] == "done" and len(report["records"]) == 1
    assert [r["error"] for r in report["records_refused"]] == [
        "data.item: required", "type_name: 'invoice' is not among the selected tables"]
    stored = api.get(f"/api/v1/records/order/{report['records'][0]}").json()
    assert stored["data"] == {"item": "pizza", "quantity": 2} and stored["owner_id"] == "ed"
    assert "order: {" in llm_server.calls_to("")[-1].messages[0]["content"]  # the schema was shown


def test_without_a_language_model_learning_is_skipped_visibly(settings: Settings, llm_server: ScriptedLLMServer,
                                                              minilm: Embedder) -> None:
    from tests.api.chat.conftest import chat_settings_for

    plain = chat_settings_for(settings, llm_server)  # no ZENGRAM_LLM_*: nothing to extract with
    container = build_container(plain, embedder=minilm, clock=ChatClock())
    try:
        with TestClient(build_embedded_app(plain, container), headers={"x-api-key": API_KEY}) as client:
            llm_server.script("ok", route="openai")
            body = complete(client, "I like jazz", subject_id="fa", chat_id="s")
            assert body["mnx"]["learning"]["status"] == "skipped"
            event = client.get("/api/v1/chat/trace", params={"chat_id": "s"}).json()["events"][0]
            assert event["learning"]["status"] == "skipped" and "ZENGRAM_LLM" in event["learning"]["error"]
    finally:
        container.close()


def test_stored_jobs_survive_a_restart(chat_settings: Settings, llm_server: ScriptedLLMServer, minilm: Embedder,
                                       chat_clock: ChatClock) -> None:
    first = build_container(chat_settings, embedder=minilm, clock=chat_clock)
    now = chat_clock.now()
    job = LearningJob(id="job_before_the_crash", project_id="global", subject_id="gu", chat_id="g", event_id="none",
                      memories=LearnMode.AUTO, messages=[{"role": "user", "content": "I speak Danish"}],
                      not_before=now, created_at=now, updated_at=now)
    first.chat.learning.enqueue(job, dispatch=False)  # stored, then the process died before any worker took it
    first.close()

    llm_server.script({"memories": [{"text": "User speaks Danish"}]})
    second: Container = build_container(chat_settings, embedder=minilm, clock=chat_clock)
    try:
        with TestClient(build_embedded_app(chat_settings, second), headers={"x-api-key": API_KEY}) as client:
            assert [j["status"] for j in wait_for_learning(client, "g")] == ["done"]
            assert [m["text"] for m in memories_of(client, "gu")] == ["User speaks Danish"]
    finally:
        second.close()
