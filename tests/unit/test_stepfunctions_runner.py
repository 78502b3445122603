"""The Step Functions research runner against botocore's Stubber: the deployed `sync` mode (StartSyncExecution,
which moto lacks), the `poll` mode's timeout, and how a failed execution's error comes back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber
from zengram.adapters.stepfunctions import StepFunctionsResearchRunner, client_config
from zengram.kernel.errors import LLMInvalidResponse, LLMUnavailable, ResearchFailed, ResearchTimedOut
from zengram.memory.domain.research import ResearchRequest, ResearchState
from zengram.web.errors import STATUS_OF_KIND

ARN = "arn:aws:states:us-east-1:123456789012:stateMachine:zengram-research"
EXECUTION = "arn:aws:states:us-east-1:123456789012:express:zengram-research:run-1:1"
STARTED = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
START = ResearchState.start(ResearchRequest(topic="what replaced the cache?", client_id="acme-corp"))


@pytest.fixture
def stubbed() -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client("stepfunctions", region_name="us-east-1", aws_access_key_id="testing",
                          aws_secret_access_key="testing")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def sync_answer(status: str, **fields: Any) -> dict[str, Any]:
    return {"executionArn": EXECUTION, "stateMachineArn": ARN, "startDate": STARTED, "stopDate": STARTED,
            "status": status, **fields}


def test_sync_mode_returns_the_final_state(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    final = START.model_copy(update={"iterations": 1, "memory_ids": ["m-1"]})
    stubber.add_response("start_sync_execution", sync_answer("SUCCEEDED", output=final.model_dump_json()),
                         {"stateMachineArn": ARN, "input": START.model_dump_json()})
    assert StepFunctionsResearchRunner(ARN, client=client).run(START) == final


@pytest.mark.parametrize(("error", "raised"), [("LLMInvalidResponse", LLMInvalidResponse),
                                               ("LLMUnavailable", LLMUnavailable)])
def test_a_step_error_comes_back_as_the_same_domain_error(
    stubbed: tuple[Any, Stubber], error: str, raised: type[Exception]
) -> None:
    client, stubber = stubbed
    cause = json.dumps({"errorMessage": "LLM answer is not the expected JSON", "errorType": error})
    stubber.add_response("start_sync_execution", sync_answer("FAILED", error=error, cause=cause))
    with pytest.raises(raised, match="LLM answer is not the expected JSON"):
        StepFunctionsResearchRunner(ARN, client=client).run(START)


def test_any_other_failure_is_a_research_failure(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    stubber.add_response("start_sync_execution", sync_answer("TIMED_OUT", error="States.Timeout",
                                                             cause="execution timed out"))
    with pytest.raises(ResearchTimedOut, match=r"research execution timed_out: States\.Timeout: execution timed out"):
        StepFunctionsResearchRunner(ARN, client=client).run(START)


def test_poll_mode_stops_an_execution_that_outlives_its_timeout(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    stubber.add_response("start_execution", {"executionArn": EXECUTION, "startDate": STARTED},
                         {"stateMachineArn": ARN, "name": ANY, "input": START.model_dump_json()})
    running = {"executionArn": EXECUTION, "stateMachineArn": ARN, "status": "RUNNING", "startDate": STARTED}
    stubber.add_response("describe_execution", running, {"executionArn": EXECUTION})
    stubber.add_response("stop_execution", {"stopDate": STARTED},
                         {"executionArn": EXECUTION, "error": "ResearchTimeout"})
    runner = StepFunctionsResearchRunner(ARN, mode="poll", timeout=0.0, client=client, sleep=lambda _: None)
    with pytest.raises(ResearchTimedOut, match="did not finish"):
        runner.run(START)


def test_poll_mode_timing_out_is_a_gateway_timeout_not_a_bad_gateway() -> None:
    assert STATUS_OF_KIND[ResearchTimedOut.kind] == 504 and issubclass(ResearchTimedOut, ResearchFailed)


@pytest.mark.parametrize("variable", ["AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SFN"])
def test_an_emulator_endpoint_drops_the_sync_host_prefix(variable: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore sends StartSyncExecution to sync-<host>; an emulator on localhost has no such host."""
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SFN"):
        monkeypatch.delenv(name, raising=False)
    assert client_config("sync", 25).inject_host_prefix is True
    monkeypatch.setenv(variable, "http://127.0.0.1:4566")
    assert client_config("sync", 25).inject_host_prefix is False
    client = boto3.client("stepfunctions", region_name="us-east-1", aws_access_key_id="testing",
                          aws_secret_access_key="testing", config=client_config("sync", 25))
    with Stubber(client) as stubber:
        stubber.add_response("start_sync_execution", sync_answer("SUCCEEDED", output=START.model_dump_json()))
        client.start_sync_execution(stateMachineArn=ARN, input="{}")
    assert client.meta.endpoint_url == "http://127.0.0.1:4566"


def test_a_sync_run_is_never_retried_and_waits_as_long_as_the_run() -> None:
    sync, poll = client_config("sync", 25), client_config("poll", 25)
    assert sync.retries["total_max_attempts"] == 1  # a second start would run the research (and its LLM calls) twice
    assert poll.retries["total_max_attempts"] == 3
    assert sync.read_timeout > 25 and sync.connect_timeout <= 5
