"""The Step Functions research runner against a real Step Functions emulator (LocalStack), both modes: `sync`
(StartSyncExecution, which moto lacks, on an Express machine) and `poll` (StartExecution + DescribeExecution on a
Standard machine, the deployed mode). The runner is built as the host builds it (bootstrap, AWS_ENDPOINT_URL set),
so its client must drop the `sync-` host prefix to reach the emulator. LocalStack runs no Lambda here (no Docker):
the machines are Pass, Fail and Wait states standing in for the step function's answers."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from zengram.kernel.errors import LLMUnavailable, ResearchTimedOut
from zengram.memory.domain.research import ResearchRequest, ResearchState
from zengram.memory.ports import ResearchRunner
from zengram.memory.wiring import build_research_runner
from zengram.settings import Settings

from tests.localstack_support import LocalStackUnavailable, localstack_url

pytestmark = pytest.mark.xdist_group("localstack")

REGION = "us-east-1"
ROLE = "arn:aws:iam::000000000000:role/zengram-research"
START = ResearchState.start(ResearchRequest(topic="what replaced the cache?", client_id="acme-corp"))


@pytest.fixture(scope="module")
def endpoint() -> str:
    try:
        return localstack_url()
    except LocalStackUnavailable as reason:
        pytest.skip(f"no LocalStack: {reason}")


@pytest.fixture
def sfn(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    import boto3

    for name, value in {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                        "AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL_SFN", raising=False)
    yield boto3.client("stepfunctions", region_name=REGION)


def machine(sfn: Any, kind: str, states: dict[str, Any], timeout: int | None = None) -> str:
    definition: dict[str, Any] = {"StartAt": next(iter(states)), "States": states}
    if timeout is not None:
        definition["TimeoutSeconds"] = timeout
    arn: str = sfn.create_state_machine(name=f"research-{uuid.uuid4().hex[:8]}", definition=json.dumps(definition),
                                        roleArn=ROLE, type=kind)["stateMachineArn"]
    return arn


def runner(arn: str, mode: str, timeout: float = 20.0) -> ResearchRunner:
    """The runner the API function's container builds from its environment."""
    settings = Settings(research_state_machine_arn=arn, research_execution=mode, research_timeout=timeout,
                        aws_region=REGION)
    return build_research_runner(settings, steps=None)  # type: ignore[arg-type]  # steps serve the in-process loop


# A Pass state answering as the research steps do: the state, one round further, with a memory found.
ONE_ROUND = {"Type": "Pass", "Result": 1, "ResultPath": "$.iterations", "Next": "Found"}
FOUND = {"Type": "Pass", "Result": ["m-1"], "ResultPath": "$.memory_ids", "End": True}


def test_sync_mode_returns_the_final_state_of_an_express_execution(sfn: Any) -> None:
    arn = machine(sfn, "EXPRESS", {"Retrieve": ONE_ROUND, "Found": FOUND})
    final = runner(arn, "sync").run(START)
    assert final == START.model_copy(update={"iterations": 1, "memory_ids": ["m-1"]})


def test_sync_mode_raises_the_step_error_the_execution_failed_with(sfn: Any) -> None:
    cause = json.dumps({"errorMessage": "LLM provider unavailable: the endpoint timed out",
                        "errorType": "LLMUnavailable"})
    arn = machine(sfn, "EXPRESS", {"Judge": {"Type": "Fail", "Error": "LLMUnavailable", "Cause": cause}})
    with pytest.raises(LLMUnavailable, match="the endpoint timed out"):
        runner(arn, "sync").run(START)


def test_sync_mode_reports_a_machine_that_ran_out_of_time(sfn: Any) -> None:
    arn = machine(sfn, "EXPRESS", {"Judge": {"Type": "Wait", "Seconds": 5, "End": True}}, timeout=1)
    with pytest.raises(ResearchTimedOut, match="timed_out"):
        runner(arn, "sync").run(START)


def test_poll_mode_returns_the_final_state_of_a_standard_execution(sfn: Any) -> None:
    arn = machine(sfn, "STANDARD", {"Retrieve": ONE_ROUND, "Found": FOUND})
    final = runner(arn, "poll").run(START)
    assert final.iterations == 1 and final.memory_ids == ["m-1"]


def test_poll_mode_stops_a_run_that_outlasts_the_request(sfn: Any) -> None:
    arn = machine(sfn, "STANDARD", {"Judge": {"Type": "Wait", "Seconds": 30, "End": True}})
    with pytest.raises(ResearchTimedOut, match="did not finish within 1 s"):
        runner(arn, "poll", timeout=1.0).run(START)
    assert statuses_once_settled(sfn, arn) == ["ABORTED"]


def statuses_once_settled(sfn: Any, arn: str, attempts: int = 100) -> list[str]:
    """The executions' statuses once none is RUNNING (LocalStack applies StopExecution a moment after answering)."""
    import time

    for _ in range(attempts):
        statuses = [execution["status"] for execution in sfn.list_executions(stateMachineArn=arn)["executions"]]
        if "RUNNING" not in statuses:
            break
        time.sleep(0.2)
    return statuses
