"""The template's state machines with their Task states in Lambda containers: `POST /research` through the
emulated API Gateway runs ResearchStateMachine (from infra/statemachines/research.asl.json, created by
infra.local_jobs) in moto's Step Functions, whose Task states invoke ResearchStepFunction in its container
through `sam local start-lambda`, against the scripted model; an indexing job of /kb runs
DocumentsIndexStateMachine the same way, its Tasks in DocumentsStepFunction's container.

Each test reads the executions from the emulator afterwards: they ran, in the states the definition names, and
the API's answer is what the steps computed."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from infra.local_jobs.schedules import lambda_client
from infra.local_jobs.step_functions import client as sfn_client
from tests.compat.test_upstream_clients import call
from tests.e2e.conftest import unavailable
from tests.e2e.helpers import eventually, unique
from tests.e2e.warming import warmed
from tests.llm_server import ScriptedLLMServer
from tests.support import REPO_ROOT

pytestmark = pytest.mark.xdist_group("e2e")  # one worker, one cloud (conftest.py)

SAMPLE_TOPIC = "which decision superseded the caching approach, and what status did it leave the API in?"


@pytest.fixture(scope="module")
def machines(local_cloud: dict[str, Any]) -> dict[str, Any]:
    """The Step Functions emulator's client and the machines' ARNs; the step function's container warmed."""
    if local_cloud.get("target") != "local-cloud":
        pytest.skip("the embedded server runs research and indexing in-process: no state machine to watch")
    if "sfn_url" not in local_cloud:
        unavailable("this local cloud runs no Step Functions emulator (infra.local_jobs.start)")
    # A first invocation of the step function starts its container and runs its init (20-30 s on this loaded
    # machine; longer than the function's 18 s, and then the runtime is reset and the next call starts over), longer
    # than the Retrieve Task's 10 s: invoked until it answers, as a provisioned function would be ready.
    invoker = lambda_client(local_cloud["lambda_url"])
    sample = (REPO_ROOT / "events" / "research_step" / "retrieve.json").read_bytes()
    started, answer = time.monotonic(), b""
    for _ in range(4):
        answer = invoker.invoke(FunctionName="ResearchStepFunction", Payload=sample)["Payload"].read()
        if b'"iterations"' in answer:  # the retrieved state, not an error or a timeout
            break
    assert b'"iterations"' in answer, answer
    # ... and the research API function's own container (its first call would spend the request's time on init)
    refused = warmed(lambda: httpx.post(f"{local_cloud['api_url']}/research", json={"topic": ""}, timeout=180,
                                        headers={"x-api-key": local_cloud["api_key"]}),
                     lambda response: response.status_code == 400)
    assert refused.status_code == 400, refused.text
    print(f"research functions warmed in {time.monotonic() - started:.1f} s")
    return {"sfn": sfn_client(local_cloud["sfn_url"], local_cloud.get("region", "us-east-1")),
            **local_cloud["state_machines"]}


def executions(machines: dict[str, Any], machine: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = machines["sfn"].list_executions(stateMachineArn=machines[machine])["executions"]
    return found


def task_states(machines: dict[str, Any], execution_arn: str) -> list[str]:
    """The Task states the execution entered, in order (its history, as the console shows it)."""
    history = machines["sfn"].get_execution_history(executionArn=execution_arn, maxResults=1000)["events"]
    return [event["stateEnteredEventDetails"]["name"] for event in history
            if event["type"] == "TaskStateEntered"]


def research(api: httpx.Client, client_id: str) -> httpx.Response:
    """POST /research with a key of its own: research is rate limited per key (one run an hour by default)."""
    created = call(api, "POST", "/admin/keys", 201, json={"name": unique("research"), "role": "read",
                                                          "clients": [client_id]})
    return api.post("/research", headers={"x-api-key": created["key"]},  # in place of the client's own key
                    json={"topic": SAMPLE_TOPIC, "client_id": client_id, "max_iterations": 3})


def store_caching_story(api: httpx.Client, client_id: str) -> dict[str, str]:
    drafts = {
        "decision": {"type": "decision", "source_agent": "claude-code",
                     "content": "Decided to replace the Redis caching approach with HTTP cache headers"},
        "status": {"type": "status", "source_agent": "n8n", "subject": "public-api", "status_value": "maintenance",
                   "content": "The public API is in maintenance mode after the caching change"},
        "event": {"type": "event", "source_agent": "n8n", "content": "The Redis cluster was shut down on Friday"},
    }
    ids = {name: call(api, "POST", "/memory", 201, json={**draft, "client_id": client_id})["id"]
           for name, draft in drafts.items()}
    eventually(lambda: call(api, "GET", "/memory/search", params={"q": "Redis caching", "client_id": client_id}),
               lambda body: ids["decision"] in [hit["id"] for hit in body["results"]])
    return ids


def test_research_runs_the_state_machine_with_its_steps_in_containers(
    api: httpx.Client, machines: dict[str, Any], llm: ScriptedLLMServer
) -> None:
    client_id = unique("acme")
    ids = store_caching_story(api, client_id)
    llm.script(
        {"draft": f"Cache headers replaced Redis [mem:{ids['decision']}]", "status": "INSUFFICIENT",
         "reason": "the API status is not covered", "missing": ["public API status", "maintenance mode"]},
        {"draft": "complete", "status": "SUFFICIENT", "reason": "both hops answered", "missing": []},
        {"answer": f"HTTP cache headers superseded Redis [mem:{ids['decision']}]; the API was left in maintenance "
                   f"[mem:{ids['status']}].",
         "key_findings": [f"Redis replaced [mem:{ids['decision']}]"], "unresolved": []},
    )
    before = {e["executionArn"] for e in executions(machines, "ResearchStateMachine")}

    started = time.monotonic()
    response = research(api, client_id)
    print(f"POST /research: {time.monotonic() - started:.1f} s")

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["iterations"] == 2 and body["partial"] is False
    assert body["cited_memory_ids"] == [ids["decision"], ids["status"]]
    assert llm.pending == 0 and len(llm.requests) == 3  # judge, judge, synthesize: each from the step container
    [execution] = [e for e in executions(machines, "ResearchStateMachine") if e["executionArn"] not in before]
    assert execution["status"] == "SUCCEEDED", machines["sfn"].describe_execution(
        executionArn=execution["executionArn"])
    assert task_states(machines, execution["executionArn"]) == ["Retrieve", "Judge", "Retrieve", "Judge",
                                                                 "Synthesize"]
    output = json.loads(machines["sfn"].describe_execution(executionArn=execution["executionArn"])["output"])
    assert output["iterations"] == 2 and output["client_id"] == client_id


def test_a_step_that_fails_fails_the_execution_and_the_request(
    api: httpx.Client, machines: dict[str, Any], llm: ScriptedLLMServer
) -> None:
    client_id = unique("acme")
    store_caching_story(api, client_id)
    llm.script("not json", "still not json")  # the judge's answer, and its one repair attempt
    before = {e["executionArn"] for e in executions(machines, "ResearchStateMachine")}

    response = research(api, client_id)

    assert response.status_code == 502 and list(response.json()) == ["error"], response.text
    [execution] = [e for e in executions(machines, "ResearchStateMachine") if e["executionArn"] not in before]
    assert execution["status"] == "FAILED"
    assert task_states(machines, execution["executionArn"]) == ["Retrieve", "Judge"]  # no retry of a domain error
    # ... failed by the step's own error (the judge's answer was no JSON), as the Lambda runtime reported it
    failed = machines["sfn"].describe_execution(executionArn=execution["executionArn"])
    assert failed["error"] == "LLMInvalidResponse", failed


def test_an_indexing_job_runs_the_documents_machine_in_the_step_container(
    local_cloud: dict[str, Any], api_url: str, api_key: str, machines: dict[str, Any]
) -> None:
    from tests.e2e.test_agent_brain_cli import upload

    folder = upload(local_cloud, unique("state-machine-docs"))
    before = {e["executionArn"] for e in executions(machines, "DocumentsIndexStateMachine")}
    headers = {"authorization": f"Bearer {api_key}"}

    queued = httpx.post(f"{api_url}/kb/index", headers=headers, timeout=120,
                        json={"folder_path": folder, "include_code": True})
    assert queued.status_code in (200, 202) and queued.json()["status"] == "pending", queued.text
    job_id = queued.json()["job_id"]
    job = eventually(lambda: httpx.get(f"{api_url}/kb/index/jobs/{job_id}", headers=headers, timeout=60).json(),
                     lambda body: body.get("status") in ("done", "failed", "cancelled"), seconds=300, interval=2)

    assert job["status"] == "done" and job["total_documents"] == 6, job  # tests/data/kb_sample
    [execution] = [e for e in executions(machines, "DocumentsIndexStateMachine") if e["executionArn"] not in before]
    assert execution["status"] == "SUCCEEDED"
    states = task_states(machines, execution["executionArn"])
    assert states[0] == "Plan" and states[-1] == "Finish" and "Batch" in states and "MarkFailed" not in states
    assert job["total_chunks"] > 0, job
    status = httpx.get(f"{api_url}/kb/health/status", headers=headers, timeout=60).json()
    assert status["total_chunks"] >= job["total_chunks"] and status["indexing_in_progress"] is False, status
