"""infra/statemachines/research.asl.json: valid ASL, every placeholder substituted by template.yaml, and the
research API function allowed to run it synchronously."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.infra.template_model import load_template
from tests.support import REPO_ROOT

ASL_PATH = REPO_ROOT / "infra" / "statemachines" / "research.asl.json"
PLACEHOLDER = re.compile(r"\$\{(\w+)\}")
API_GATEWAY_LIMIT_SECONDS = 30  # HTTP APIs end every integration at 30 s
LAMBDA_SERVICE_ERRORS = {"Lambda.ServiceException", "Lambda.AWSLambdaException", "Lambda.SdkClientException",
                         "Lambda.TooManyRequestsException", "Lambda.ClientExecutionTimeoutException"}


def asl() -> dict[str, Any]:
    definition: dict[str, Any] = json.loads(ASL_PATH.read_text())
    return definition


def resources() -> dict[str, Any]:
    found: dict[str, Any] = load_template()["Resources"]
    return found


def test_definition_is_valid_asl() -> None:
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

    AmazonStateLanguageParser.parse(ASL_PATH.read_text())  # raises on anything Step Functions would refuse


def test_the_loop_is_retrieve_judge_choice_synthesize() -> None:
    states = asl()["States"]
    assert asl()["StartAt"] == "Retrieve"
    assert states["Retrieve"]["Next"] == "Judge" and states["Judge"]["Next"] == "Done?"
    choice = states["Done?"]
    assert choice["Type"] == "Choice" and choice["Default"] == "Retrieve"
    assert {rule["Next"] for rule in choice["Choices"]} == {"Synthesize"}
    assert [rule["Variable"] for rule in choice["Choices"]] == ["$.judgement.status", "$.repeated_query",
                                                               "$.iterations"]
    assert states["Synthesize"]["End"] is True


def test_every_task_calls_the_step_function_through_the_substitution_and_retries_lambda_errors() -> None:
    tasks = {name: state for name, state in asl()["States"].items() if state["Type"] == "Task"}
    assert set(tasks) == {"Retrieve", "Judge", "Synthesize"}
    for name, task in tasks.items():
        assert task["Resource"] == "arn:aws:states:::lambda:invoke"
        assert task["Parameters"]["FunctionName"] == "${ResearchStepFunctionArn}"
        assert task["Parameters"]["Payload"] == {"step": name.lower(), "state.$": "$"}
        assert task["OutputPath"] == "$.Payload"
        assert {error for retry in task["Retry"] for error in retry["ErrorEquals"]} == LAMBDA_SERVICE_ERRORS


def seconds(value: object) -> int:
    return int(str(value))


def test_the_timeouts_line_up_from_each_task_to_api_gateway() -> None:
    """Each Task ends before the machine, the machine before the API function stops waiting, the function before
    API Gateway's 30 s; an LLM step's Lambda ends (its LLM request first) before its Task gives up on it."""
    definition, template = asl(), resources()
    tasks = {name: state for name, state in definition["States"].items() if state["Type"] == "Task"}
    step_function = template["ResearchStepFunction"]["Properties"]
    step_variables = step_function["Environment"]["Variables"]
    research_function = template["ResearchFunction"]["Properties"]
    caller_wait = seconds(research_function["Environment"]["Variables"]["ZENGRAM_RESEARCH_TIMEOUT"])
    function_timeout = seconds(research_function.get("Timeout", load_template()["Globals"]["Function"]["Timeout"]))

    assert seconds(step_variables["ZENGRAM_LLM_TIMEOUT"]) < seconds(step_function["Timeout"])
    assert step_variables["ZENGRAM_LLM_MAX_RETRIES"] == "0"
    assert all("TimeoutSeconds" in task for task in tasks.values())
    assert seconds(step_function["Timeout"]) < min(tasks[name]["TimeoutSeconds"] for name in ("Judge", "Synthesize"))
    assert max(task["TimeoutSeconds"] for task in tasks.values()) < definition["TimeoutSeconds"]
    assert definition["TimeoutSeconds"] < caller_wait < function_timeout < API_GATEWAY_LIMIT_SECONDS


def test_the_api_function_starts_and_polls_a_standard_machine() -> None:
    """A loop of up to five LLM calls can outlast an HTTP request: the caller starts the run and keeps the deadline
    (poll mode), which needs DescribeExecution, which Express machines do not have."""
    assert resources()["ResearchStateMachine"]["Properties"]["Type"] == "STANDARD"
    variables = resources()["ResearchFunction"]["Properties"]["Environment"]["Variables"]
    assert variables["ZENGRAM_RESEARCH_EXECUTION"] == "poll"


def test_every_placeholder_is_substituted_by_the_template() -> None:
    machine = resources()["ResearchStateMachine"]
    assert machine["Type"] == "AWS::Serverless::StateMachine"
    properties = machine["Properties"]
    assert REPO_ROOT / properties["DefinitionUri"] == ASL_PATH
    assert set(PLACEHOLDER.findall(ASL_PATH.read_text())) == set(properties["DefinitionSubstitutions"])
    assert properties["DefinitionSubstitutions"]["ResearchStepFunctionArn"] == {"Ref": "ResearchStepFunction.Alias"}
    assert properties["Policies"][0] == {"LambdaInvokePolicy": {"FunctionName": {"Ref": "ResearchStepFunction"}}}
    assert properties["Logging"]["Destinations"]


def test_the_research_function_may_run_follow_and_stop_executions_of_that_machine_only() -> None:
    function = resources()["ResearchFunction"]["Properties"]
    variables = function["Environment"]["Variables"]
    assert variables["ZENGRAM_RESEARCH_STATE_MACHINE_ARN"] == {"Ref": "ResearchStateMachine"}
    assert variables["RESEARCH_ENABLED"] == {"Ref": "ResearchEnabled"}
    statements = [s for policy in function["Policies"] if "Statement" in policy for s in policy["Statement"]]
    assert {"Sid": "RunResearch", "Effect": "Allow", "Action": ["states:StartExecution", "states:StartSyncExecution"],
            "Resource": {"Ref": "ResearchStateMachine"}} in statements
    follow = next(statement for statement in statements if statement["Sid"] == "FollowResearch")
    assert follow["Action"] == ["states:DescribeExecution", "states:StopExecution"]
    assert follow["Resource"] == {"Fn::Sub": "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:"
                                            "execution:${ResearchStateMachine.Name}:*"}
