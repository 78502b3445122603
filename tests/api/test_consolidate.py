"""POST /consolidate (async job and ?sync=true), GET /consolidate/job/{id}, GET /consolidate/status over HTTP."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import Container, build_container
from zengram.embedded.app import build_embedded_app
from zengram.settings import Settings

from tests.api.helpers import TIMESTAMP, UUID, assert_error, store
from tests.llm_server import TEST_LLM_MODEL, ScriptedLLMServer
from tests.support import API_KEY, HashingEmbedder, TickingClock

EMPTY_PLAN = {"merged_facts": [], "contradictions": [], "connections": [], "summaries": [], "categories": []}


@pytest.fixture
def brain(llm_settings: Settings, clock: TickingClock) -> Iterator[Container]:
    built = build_container(llm_settings, embedder=HashingEmbedder(), clock=clock)
    yield built
    built.close()


@pytest.fixture
def api(llm_settings: Settings, brain: Container) -> Iterator[TestClient]:
    with TestClient(build_embedded_app(llm_settings, brain), headers={"x-api-key": API_KEY}) as test_client:
        yield test_client


def finished_job(api: TestClient, job_id: str) -> dict[str, Any]:
    """Polls the job until it has finished (the deadline only bounds a hung run; nothing asserts on time)."""
    deadline = time.monotonic() + 60
    while True:
        response = api.get(f"/consolidate/job/{job_id}")
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        if body["status"] in ("succeeded", "failed") or time.monotonic() > deadline:
            return body
        time.sleep(0.02)


def test_post_starts_a_job_that_runs_in_the_background(api: TestClient, llm_server: ScriptedLLMServer) -> None:
    # Given two facts the LLM merges
    first = store(api, "Acme's site runs Next.js 14", type="fact", client_id="acme")["id"]
    second = store(api, "The Acme frontend uses the App Router", type="fact", client_id="acme")["id"]
    llm_server.script({**EMPTY_PLAN, "merged_facts": [
        {"content": "Acme's frontend is Next.js 14 with the App Router", "source_ids": [first, second]}]})

    # When consolidation is triggered
    response = api.post("/consolidate")

    # Then it answers at once with the job, which finishes on its own
    assert response.status_code == 202, response.text
    started = response.json()
    assert started["status"] == "started" and UUID.match(started["job_id"])
    job = finished_job(api, started["job_id"])
    assert job["status"] == "succeeded", job
    assert (job["result"]["merged"], job["result"]["superseded"], job["trigger"]) == (1, 2, "api")
    assert all(TIMESTAMP.match(job[name]) for name in ("created_at", "started_at", "finished_at"))
    assert api.get(f"/memory/{first}").json()["superseded_by"] is not None


def test_sync_runs_and_answers_with_the_finished_job(api: TestClient, llm_server: ScriptedLLMServer) -> None:
    store(api, "Acme renewed the contract", client_id="acme")
    llm_server.script(EMPTY_PLAN)
    response = api.post("/consolidate", params={"sync": "true"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "succeeded" and body["error"] is None
    assert (body["result"]["batches"], body["result"]["consolidated"]) == (1, 1)
    assert api.get(f"/consolidate/job/{body['job_id']}").json() == body


def test_status_reports_the_engine(api: TestClient, llm_server: ScriptedLLMServer) -> None:
    before = api.get("/consolidate/status")
    assert before.status_code == 200
    assert before.json() == {"is_running": False, "last_run_at": None, "enabled": False, "interval": "0 */6 * * *",
                             "llm": {"provider": "openai-compatible", "model": TEST_LLM_MODEL}, "last_job_id": None}
    job = api.post("/consolidate", params={"sync": "true"}).json()  # nothing to send: no LLM call
    after = api.get("/consolidate/status").json()
    assert after["last_run_at"] == job["finished_at"] and not after["is_running"]
    assert after["last_job_id"] == job["job_id"]


def test_a_held_lock_answers_409(api: TestClient, brain: Container) -> None:
    # Given a run holding the lock
    brain.consolidation.start()
    assert api.get("/consolidate/status").json()["is_running"] is True
    # When another is asked for, async or sync
    for params in ({}, {"sync": "true"}):
        response = api.post("/consolidate", params=params)
        # Then it is refused
        assert assert_error(response, 409) == "consolidation already running"


def test_an_expired_lock_no_longer_blocks(api: TestClient, brain: Container, clock: TickingClock,
                                          llm_server: ScriptedLLMServer) -> None:
    crashed = brain.consolidation.start()  # took the lock, then its process died
    clock.advance(seconds=brain.settings.consolidation_lock_seconds + 1)
    assert api.get("/consolidate/status").json()["is_running"] is False
    response = api.post("/consolidate", params={"sync": "true"})
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "succeeded"
    abandoned = api.get(f"/consolidate/job/{crashed.id}").json()
    assert abandoned["status"] == "failed" and "lock expired" in abandoned["error"]


def test_without_an_llm_provider_it_is_503(client: TestClient) -> None:
    response = client.post("/consolidate")
    assert assert_error(response, 503) == ("LLM provider unavailable: consolidation needs ZENGRAM_LLM_BASE_URL (an "
                                          "OpenAI-compatible endpoint, e.g. Ollama) or ZENGRAM_LLM_API_KEY (OpenAI); "
                                          "see docs/settings.md")
    assert_error(client.post("/consolidate", params={"sync": "true"}), 503)
    status = client.get("/consolidate/status").json()
    assert status["llm"] == {"provider": "none", "model": "none"} and status["is_running"] is False


def test_an_invalid_llm_answer_fails_the_sync_run_with_502(api: TestClient, llm_server: ScriptedLLMServer) -> None:
    store(api, "Acme renewed the contract", client_id="acme")
    llm_server.script("not json", "still not json")
    response = api.post("/consolidate", params={"sync": "true"})
    assert_error(response, 502)
    status = api.get("/consolidate/status").json()
    assert status["last_run_at"] is not None and status["is_running"] is False


def test_unknown_jobs_are_404(api: TestClient) -> None:
    assert_error(api.get("/consolidate/job/no-such-job"), 404)


def test_every_route_needs_the_key(api: TestClient) -> None:
    for method, path in (("POST", "/consolidate"), ("GET", "/consolidate/status"), ("GET", "/consolidate/job/x")):
        assert_error(api.request(method, path, headers={"x-api-key": "wrong"}), 401)
