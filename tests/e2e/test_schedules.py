"""The template's scheduled jobs fired into their function containers: each `ScheduleV2` event of template.yaml
(repair sweep, consolidation, chat learning; read by infra.local_jobs.schedules, not written here) delivered to
its function through `sam local start-lambda`, and the index-outage story end to end: with the OpenSearch node
stopped a write through the API is stored and left pending, search says 503; once the node is back and the
repair schedule fires (an Event invocation, as EventBridge Scheduler sends it) the memory is found by search."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from infra.local_jobs.schedules import Schedule, fire, read_schedules
from tests.compat.test_upstream_clients import call
from tests.e2e.conftest import unavailable
from tests.e2e.helpers import eventually, unique
from tests.e2e.warming import warmed

pytestmark = pytest.mark.xdist_group("e2e")  # one worker, one cloud (conftest.py)

REPAIR_ANSWER = {"repaired", "failed", "parked", "requeued", "stopped", "pending_index"}


@pytest.fixture(scope="module")
def schedules(local_cloud: dict[str, Any]) -> dict[str, Schedule]:
    if local_cloud.get("target") != "local-cloud":
        pytest.skip("the embedded server has no scheduled functions (it runs its jobs in-process)")
    # The authorizer and the memory function answer before the outage starts (their first calls start containers)
    stats = warmed(lambda: httpx.get(f"{local_cloud['api_url']}/stats", timeout=180,
                                     headers={"x-api-key": local_cloud["api_key"]}),
                   lambda response: response.status_code == 200)
    assert stats.status_code == 200, stats.text
    memory = warmed(lambda: httpx.get(f"{local_cloud['api_url']}/memory/query", params={"type": "facts"},
                                      timeout=180, headers={"x-api-key": local_cloud["api_key"]}),
                    lambda response: response.status_code == 200)
    assert memory.status_code == 200, memory.text
    parameters = dict(item.split("=", 1) for item in local_cloud.get("parameter_overrides", []))
    return {s.function: s for s in read_schedules(parameters=parameters)}


def test_every_schedule_reaches_its_function_container(local_cloud: dict[str, Any],
                                                       schedules: dict[str, Schedule]) -> None:
    assert set(schedules) == {"RepairFunction", "ConsolidateFunction", "ChatLearningFunction"}
    answers = {}
    for function, schedule in schedules.items():
        started = time.monotonic()
        outcome = fire(schedule, local_cloud["lambda_url"], wait=True)
        print(f"{schedule.name} ({schedule.expression}): {time.monotonic() - started:.1f} s -> {outcome}")
        assert outcome["status"] == 200 and "error" not in outcome, outcome
        answers[function] = outcome["answer"]
    assert set(answers["RepairFunction"]) == REPAIR_ANSWER
    assert set(answers["ChatLearningFunction"]) == {"ran", "indexed", "synced"}
    consolidation = answers["ConsolidateFunction"]
    assert consolidation == {"skipped": True} or {"job_id", "status"} <= set(consolidation), consolidation


def node_switch(local_cloud: dict[str, Any]) -> tuple[Callable[[dict[str, Any]], None],
                                                     Callable[[dict[str, Any]], None]]:
    """The local cloud's way to stop its OpenSearch node and start it again (same port, same data folder)."""
    from infra import local_cloud as cloud

    stop, start = getattr(cloud, "stop_opensearch", None), getattr(cloud, "start_opensearch", None)
    if stop is not None and start is not None:
        return stop, start
    if not hasattr(cloud, "_start_opensearch"):
        unavailable("infra.local_cloud cannot stop and start its OpenSearch node")
    state_dir = Path(local_cloud["state_dir"])

    def stop_node(state: dict[str, Any]) -> None:
        cloud.processes.stop(state["pids"]["opensearch"])
        (state_dir / "opensearch.ready").unlink(missing_ok=True)

    def start_node(state: dict[str, Any]) -> None:
        port = int(state["opensearch_url"].rsplit(":", 1)[1])
        pid = cloud._start_opensearch(port, state_dir, Path(state["logs"]))
        state["pids"]["opensearch"] = pid
        saved = json.loads((state_dir / "state.json").read_text())  # `down` stops the node it names
        saved["pids"]["opensearch"] = pid
        (state_dir / "state.json").write_text(json.dumps(saved, indent=2) + "\n")
        cloud.processes.wait_until(lambda: cloud.processes.answers(state["opensearch_url"]),
                                   what="the OpenSearch node", timeout=240, pid=pid)

    return stop_node, start_node


def searched(api: httpx.Client, query: str, client_id: str) -> tuple[int, list[str]]:
    response = api.get("/memory/search", params={"q": query, "client_id": client_id})
    ids = [hit["id"] for hit in response.json().get("results", [])] if response.status_code == 200 else []
    return response.status_code, ids


def test_a_write_during_an_index_outage_becomes_searchable_when_the_repair_schedule_fires(
    local_cloud: dict[str, Any], api: httpx.Client, schedules: dict[str, Schedule]
) -> None:
    stop_node, start_node = node_switch(local_cloud)
    client_id = unique("outage")
    content = f"{client_id} rotates its signing keys every ninety days"
    stop_node(local_cloud)
    try:
        # Stored and served from DynamoDB, pending for the index; search cannot answer and says so
        stored = call(api, "POST", "/memory", 201, json={"type": "fact", "key": "key-rotation", "content": content,
                                                        "source_agent": "ops-bot", "client_id": client_id})
        assert stored["stored_in"] == {"vector": False, "structured_db": True}
        assert call(api, "GET", f"/memory/{stored['id']}")["content"] == content
        assert searched(api, "signing keys rotation", client_id)[0] == 503
        health = call(api, "GET", "/stats")["index_health"]
        assert health["pending_index"] >= 1 and health["status"] != "healthy"
    finally:
        start_node(local_cloud)

    # The node is back, but nothing re-indexes the record until the sweep runs
    assert stored["id"] not in searched(api, "signing keys rotation", client_id)[1]
    started = time.monotonic()
    assert fire(schedules["RepairFunction"], local_cloud["lambda_url"]) == {"status": 202}  # as Scheduler invokes
    status, ids = eventually(lambda: searched(api, "signing keys rotation", client_id),
                             lambda answer: stored["id"] in answer[1], seconds=120, interval=1)
    print(f"searchable {time.monotonic() - started:.1f} s after the repair schedule fired")
    assert status == 200 and stored["id"] in ids
    assert call(api, "GET", f"/memory/{stored['id']}")["content"] == content
