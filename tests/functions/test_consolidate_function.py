"""The consolidation function on moto's DynamoDB with the scripted LLM: the scheduled event runs a consolidation, an
async POST hands its job to an asynchronous invocation of the function, and the HTTP sample events answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from zengram.adapters.aws_lambda import LambdaJobLauncher
from zengram.assembly.provider import ContainerProvider
from zengram.memory.domain.models import MemoryType
from zengram.memory.domain.requests import MemoryDraft

from tests.functions.conftest import fresh_container_for
from tests.functions.invoke import invoke, load_event
from tests.infra.template_model import load_template
from tests.llm_server import TEST_LLM_KEY, ScriptedLLMServer

EMPTY_PLAN = {"merged_facts": [], "contradictions": [], "connections": [], "summaries": [], "categories": []}
FUNCTION = "zengram-consolidate:live"


@pytest.fixture
def consolidation_environment(lambda_environment: str, monkeypatch: pytest.MonkeyPatch,
                              llm_server: ScriptedLLMServer) -> str:
    """What template.yaml sets for ConsolidateFunction, with the LLM pointed at the scripted server."""
    for name, value in {
        "ZENGRAM_LLM_BASE_URL": llm_server.base_url, "ZENGRAM_LLM_API_KEY": TEST_LLM_KEY,
        "ZENGRAM_LLM_MODEL": "test-chat-model", "ZENGRAM_LLM_MAX_RETRIES": "0",
        "ZENGRAM_CONSOLIDATION_ENABLED": "true", "ZENGRAM_CONSOLIDATION_INTERVAL": "rate(6 hours)",
        "ZENGRAM_CONSOLIDATION_LAUNCHER": "lambda", "ZENGRAM_CONSOLIDATION_FUNCTION": FUNCTION,
    }.items():
        monkeypatch.setenv(name, value)
    return lambda_environment


@pytest.fixture
def provider(consolidation_environment: str) -> Iterator[ContainerProvider]:
    fresh = fresh_container_for("consolidate")
    yield fresh
    fresh.close()


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """Records what LambdaJobLauncher would send Lambda (the client itself is checked with a Stubber elsewhere)."""
    sent: list[tuple[str, dict[str, Any]]] = []

    def launch(self: LambdaJobLauncher, job_id: str, run_here: object) -> None:
        sent.append((self._function, {"zengram_job_id": job_id}))

    monkeypatch.setattr(LambdaJobLauncher, "launch", launch)
    return sent


def call(relative: str, *, job_id: str | None = None) -> tuple[int, dict[str, Any]]:
    event = load_event(relative)
    if job_id is not None:  # the sample's path names SAMPLE-ID
        event = json.loads(json.dumps(event).replace("SAMPLE-ID", job_id))
    response = invoke("consolidate", event)
    return response["statusCode"], json.loads(response["body"])


def two_facts(provider: ContainerProvider) -> list[str]:
    memory = provider.get().memory
    return [memory.store(MemoryDraft(type=MemoryType.FACT, content=content, source_agent="n8n",
                                     client_id="acme-corp")).memory.id
            for content in ("Acme's site runs Next.js 14", "The Acme frontend uses the App Router")]


def test_the_scheduled_event_runs_a_consolidation(provider: ContainerProvider, llm_server: ScriptedLLMServer) -> None:
    # Given two facts in DynamoDB that the LLM merges
    first, second = two_facts(provider)
    llm_server.script({**EMPTY_PLAN, "merged_facts": [
        {"content": "Acme's frontend is Next.js 14 with the App Router", "source_ids": [first, second]}]})

    # When the schedule fires
    outcome = invoke("consolidate", load_event("consolidate/scheduled_consolidation.json"))

    # Then a run consolidated them: the sources are superseded by the merged fact, in DynamoDB
    assert outcome["status"] == "succeeded", outcome
    assert (outcome["result"]["merged"], outcome["result"]["superseded"]) == (1, 2)
    store = provider.get().records
    assert type(store).__name__ == "DynamoDBRecordStore"
    sources = store.get_many([first, second])
    merged_id = sources[first].superseded_by
    assert merged_id is not None and sources[second].superseded_by == merged_id
    merged = store.get(merged_id)
    assert merged is not None and merged.active and merged.consolidated and merged.source_agent == "consolidation"
    status, body = call("consolidate/get_status.json")
    assert status == 200 and body["last_run_at"] == outcome_finished(provider, outcome["job_id"])
    assert body["enabled"] is True and body["interval"] == "rate(6 hours)" and body["is_running"] is False


def outcome_finished(provider: ContainerProvider, job_id: str) -> str:
    status, body = call("consolidate/get_job.json", job_id=job_id)
    assert status == 200
    finished: str = body["finished_at"]
    return finished


def test_the_schedule_does_nothing_when_disabled(consolidation_environment: str, monkeypatch: pytest.MonkeyPatch,
                                                  llm_server: ScriptedLLMServer) -> None:
    monkeypatch.setenv("ZENGRAM_CONSOLIDATION_ENABLED", "false")
    fresh = fresh_container_for("consolidate")
    try:
        assert invoke("consolidate", load_event("consolidate/scheduled_consolidation.json")) == {"skipped": True}
        assert llm_server.requests == []
    finally:
        fresh.close()


def test_an_async_post_runs_in_an_asynchronous_invocation(
    provider: ContainerProvider, launched: list[tuple[str, dict[str, Any]]], llm_server: ScriptedLLMServer,
) -> None:
    two_facts(provider)
    llm_server.script(EMPTY_PLAN)
    # When the API is asked for a run
    status, body = call("consolidate/post_consolidate.json")
    # Then it answers 202 and hands the job to the function itself, queued, holding the lock
    assert status == 202 and body["status"] == "started"
    assert launched == [(FUNCTION, {"zengram_job_id": body["job_id"]})]
    assert call("consolidate/get_status.json")[1]["is_running"] is True
    assert call("consolidate/post_consolidate.json")[0] == 409
    # When Lambda delivers that event
    outcome = invoke("consolidate", load_event("consolidate/run_job.json", zengram_job_id=body["job_id"]))
    # Then the job ran and the lock is free
    assert outcome["status"] == "succeeded" and outcome["result"]["consolidated"] == 2
    status, job = call("consolidate/get_job.json", job_id=body["job_id"])
    assert status == 200 and job["status"] == "succeeded"
    assert call("consolidate/get_status.json")[1]["is_running"] is False
    # ...and a repeated delivery of the same event does not run it again
    assert invoke("consolidate", load_event("consolidate/run_job.json", zengram_job_id=body["job_id"]))["status"] == (
        "succeeded")
    assert len(llm_server.requests) == 1


def test_the_http_sample_events(provider: ContainerProvider, llm_server: ScriptedLLMServer) -> None:
    status, body = call("consolidate/post_consolidate_sync.json")  # nothing stored: no LLM call needed
    assert status == 200 and body["status"] == "succeeded" and body["result"]["batches"] == 0
    status, body = call("consolidate/get_job.json")
    assert status == 404 and body == {"error": "job SAMPLE-ID not found"}


def test_the_template_wires_schedule_self_invocation_and_routes() -> None:
    function = load_template()["Resources"]["ConsolidateFunction"]["Properties"]
    variables = function["Environment"]["Variables"]
    name = function["FunctionName"]["Fn::Sub"]
    assert name[0] == "zg-${Stage}-${StackSuffix}-consolidate"  # computed per stack (tests/infra/test_stack.py)
    assert variables["ZENGRAM_CONSOLIDATION_LAUNCHER"] == "lambda"
    assert variables["ZENGRAM_CONSOLIDATION_FUNCTION"] == {"Fn::Sub": [f"{name[0]}:live", name[1]]}
    schedule = function["Events"]["ScheduledConsolidation"]
    assert schedule["Type"] == "ScheduleV2"
    assert schedule["Properties"]["ScheduleExpression"] == {"Ref": "ConsolidationSchedule"}
    statements = [s for policy in function["Policies"] if isinstance(policy, dict) and "Statement" in policy
                  for s in policy["Statement"]]
    invoke_self = next(s for s in statements if s.get("Action") == "lambda:InvokeFunction")
    assert [resource["Fn::Sub"] for resource in invoke_self["Resource"]] == [
        [f"arn:${{AWS::Partition}}:lambda:${{AWS::Region}}:${{AWS::AccountId}}:function:{name[0]}{qualifier}", name[1]]
        for qualifier in ("", ":*")
    ]


def test_a_crashed_run_stops_blocking_once_its_lock_expires_in_dynamodb(
    consolidation_environment: str, llm_server: ScriptedLLMServer,
) -> None:
    from zengram.assembly.containers import build_container
    from zengram.memory.domain.jobs import JobStatus
    from zengram.memory.services.consolidation import AlreadyRunning
    from zengram.settings import Settings

    from tests.support import HashingEmbedder, ManualClock

    clock = ManualClock()
    brain = build_container(Settings(), embedder=HashingEmbedder(), clock=clock)
    try:
        assert type(brain.records).__name__ == "DynamoDBRecordStore"
        # Given a run that took the LOCK# item and died before running its job
        crashed = brain.consolidation.start()
        with pytest.raises(AlreadyRunning):
            brain.consolidation.start()
        clock.advance(seconds=brain.settings.consolidation_lock_seconds - 1)
        with pytest.raises(AlreadyRunning):  # still within its lifetime
            brain.consolidation.run_now()
        # When its lifetime has passed
        clock.advance(seconds=2)
        assert not brain.consolidation.status().is_running
        # Then a new run goes ahead, and the crashed job is recorded as failed
        fresh = brain.consolidation.run_now()
        assert fresh.status is JobStatus.SUCCEEDED, fresh.error
        abandoned = brain.consolidation.job(crashed.id)
        assert abandoned.status is JobStatus.FAILED and "lock expired" in (abandoned.error or "")
    finally:
        brain.close()
