"""The local cloud's jobs without containers: the schedules and state machines read from template.yaml, the
clock that fires the schedules, and moto's Step Functions sending each Task's lambda:Invoke to a Lambda API
endpoint (here a small one in this process standing in for `sam local start-lambda`)."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from infra import local_jobs
from infra.local_jobs.schedules import Schedule, Ticker, read_schedules
from infra.local_jobs.step_functions import arn, client, read_machines
from infra.local_jobs.stepfunctions_server import is_function_error
from tests.infra.template_model import load_template


def test_every_schedule_of_the_template_is_read_with_its_parameter_default() -> None:
    template = load_template()
    schedules = {s.name: s for s in read_schedules()}
    assert set(schedules) == {"RepairFunction.RepairSweep", "ConsolidateFunction.ScheduledConsolidation",
                              "ChatLearningFunction.LearningSweep"}
    defaults = {name: spec.get("Default") for name, spec in template["Parameters"].items()}
    assert schedules["RepairFunction.RepairSweep"].expression == defaults["RepairSchedule"]
    assert schedules["ChatLearningFunction.LearningSweep"].expression == defaults["ChatLearningSchedule"]
    assert schedules["ConsolidateFunction.ScheduledConsolidation"].expression == defaults["ConsolidationSchedule"]
    assert all(s.payload == "{}" for s in schedules.values())  # the template gives no Input
    assert schedules["RepairFunction.RepairSweep"].period == 15 * 60


def test_parameters_change_the_expression_and_switch_consolidation_on() -> None:
    default = {s.name: s for s in read_schedules()}
    assert not default["ConsolidateFunction.ScheduledConsolidation"].enabled
    assert default["RepairFunction.RepairSweep"].enabled
    overridden = {s.name: s for s in read_schedules(parameters={"ConsolidationScheduleEnabled": "true",
                                                                "RepairSchedule": "rate(1 minute)"})}
    assert overridden["ConsolidateFunction.ScheduledConsolidation"].enabled
    assert overridden["RepairFunction.RepairSweep"].period == 60


def test_a_cron_schedule_has_no_period_and_the_ticker_leaves_it_alone() -> None:
    assert Schedule("F", "E", "cron(0 12 * * ? *)", True, "{}").period is None


def test_the_ticker_fires_each_enabled_rate_schedule_once_per_period() -> None:
    now = [1000.0]
    fired: list[str] = []
    schedules = [Schedule("Repair", "Sweep", "rate(1 minute)", True, "{}"),
                 Schedule("Learn", "Sweep", "rate(5 minutes)", True, "{}"),
                 Schedule("Consolidate", "Run", "rate(1 minute)", False, "{}")]
    ticker = Ticker(schedules, lambda s: fired.append(s.name), clock=lambda: now[0])
    assert ticker.run_pending() == []  # the first firing is one period after start
    now[0] += 60
    assert ticker.run_pending() == ["Repair.Sweep"]
    assert ticker.run_pending() == []
    now[0] += 240
    assert sorted(ticker.run_pending()) == ["Learn.Sweep", "Repair.Sweep"]
    assert fired.count("Repair.Sweep") == 2 and "Consolidate.Run" not in fired


def test_a_failed_delivery_does_not_stop_the_clock() -> None:
    now = [0.0]

    def deliver(schedule: Schedule) -> None:
        raise ConnectionError("start-lambda is down")

    ticker = Ticker([Schedule("Repair", "Sweep", "rate(1 minute)", True, "{}")], deliver, clock=lambda: now[0])
    now[0] = 60
    assert ticker.run_pending() == ["Repair.Sweep"]
    now[0] = 120
    assert ticker.run_pending() == ["Repair.Sweep"]


def test_state_machines_are_read_with_their_step_functions_substituted() -> None:
    template = load_template()
    machines = {m.logical_id: m for m in read_machines()}
    assert set(machines) == {"ResearchStateMachine", "DocumentsIndexStateMachine"}
    for machine, function in (("ResearchStateMachine", "ResearchStepFunction"),
                              ("DocumentsIndexStateMachine", "DocumentsStepFunction")):
        definition = json.loads(machines[machine].definition)
        targets = {state["Parameters"]["FunctionName"] for state in definition["States"].values()
                   if state["Type"] == "Task"}
        assert targets == {function}
        assert template["Resources"][function]["Type"] == "AWS::Serverless::Function"
        assert "${" not in machines[machine].definition
        assert machines[machine].kind == "STANDARD"


class StepFunctionStandIn(BaseHTTPRequestHandler):
    """The Lambda Invoke API for one function: each step counts a round and judges the state sufficient."""

    calls: ClassVar[list[tuple[str, dict[str, Any]]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        StepFunctionStandIn.calls.append((self.path, body))
        if body["step"] == "judge" and body["state"].get("fail"):  # as start-lambda answers a raising handler
            self.answer({"errorMessage": "LLM provider unavailable", "errorType": "LLMUnavailable",
                         "requestId": "", "stackTrace": []})
            return
        self.answer({**body["state"], "iterations": body["state"]["iterations"] + (body["step"] == "retrieve"),
                     "judgement": {"status": "SUFFICIENT"}, "last_step": body["step"]})

    def answer(self, document: dict[str, Any]) -> None:
        answer = json.dumps(document).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: Any) -> None:
        pass


def finished(sfn: Any, execution_arn: str) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while (described := sfn.describe_execution(executionArn=execution_arn))["status"] == "RUNNING":
        assert time.monotonic() < deadline
        time.sleep(0.1)
    described_execution: dict[str, Any] = described
    return described_execution


@pytest.mark.parametrize(("document", "error"), [
    ({"errorMessage": "boom", "errorType": "ValueError", "requestId": "", "stackTrace": []}, True),
    ({"errorMessage": "boom", "errorType": "ValueError"}, True),
    ({"errorMessage": "boom", "errorType": "ValueError", "iterations": 1}, False),  # a state that names its error
    ({"iterations": 1}, False),
])
def test_the_runtime_error_document_is_told_from_an_answer(document: dict[str, Any], error: bool) -> None:
    assert is_function_error(json.dumps(document).encode()) is error
    assert is_function_error(b"not json") is False


@pytest.fixture
def lambda_api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), StepFunctionStandIn)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    StepFunctionStandIn.calls = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_moto_step_functions_send_every_task_to_the_lambda_endpoint(lambda_api: str, tmp_path: Path) -> None:
    jobs = local_jobs.start(tmp_path, lambda_api)
    try:
        assert jobs["state_machines"]["ResearchStateMachine"] == arn("ResearchStateMachine")
        assert local_jobs.variables(jobs) == {
            "ZENGRAM_RESEARCH_STATE_MACHINE_ARN": arn("ResearchStateMachine"),
            "ZENGRAM_DOCUMENTS_STATE_MACHINE_ARN": arn("DocumentsIndexStateMachine")}
        assert local_jobs.parameter_overrides(jobs)["StepFunctionsEndpointUrl"].startswith(
            "http://host.containers.internal:")
        sfn = client(jobs["sfn_url"])
        execution = sfn.start_execution(stateMachineArn=arn("ResearchStateMachine"),
                                        input=json.dumps({"iterations": 0, "max_iterations": 3}), name="succeeding")
        described = finished(sfn, execution["executionArn"])
        failing = sfn.start_execution(stateMachineArn=arn("ResearchStateMachine"),
                                      input=json.dumps({"iterations": 0, "max_iterations": 3, "fail": True}), name="failing")
        failed = finished(sfn, failing["executionArn"])
    finally:
        local_jobs.stop(jobs)
    assert described["status"] == "SUCCEEDED"
    assert json.loads(described["output"])["last_step"] == "synthesize"
    paths = {path for path, _ in StepFunctionStandIn.calls}
    assert paths == {"/2015-03-31/functions/ResearchStepFunction/invocations"}
    assert [body["step"] for _, body in StepFunctionStandIn.calls] == ["retrieve", "judge", "synthesize",
                                                                       "retrieve", "judge"]
    # A raising step fails its Task (not retried: a domain error), and so the execution, with its error type
    assert failed["status"] == "FAILED" and failed.get("error") == "LLMUnavailable", failed
    for pid in (jobs["sfn_pid"], jobs["ticker_pid"]):  # nothing left running
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
