"""The research state machine, executed for real: moto interprets infra/statemachines/research.asl.json, its
Task states invoke our research step handler (moto's simple Lambda backend patched, in this test only, to import
and call it), the records live in DynamoDB on moto and the LLM is the scripted server. The POST /research
function runs it end to end and must answer exactly what the embedded, in-process loop answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from zengram.assembly.containers import Container, build_container
from zengram.assembly.provider import ContainerProvider
from zengram.kernel.ports import Embedder
from zengram.memory.api.research import research_body
from zengram.memory.domain.models import MemoryType
from zengram.memory.domain.requests import MemoryDraft
from zengram.memory.domain.research import ResearchRequest
from zengram.serverless.jobs import research_step_handler
from zengram.settings import Settings

from tests.aws_support import REGION
from tests.functions.invoke import FakeLambdaContext, invoke, load_event, load_function_module
from tests.llm_server import TEST_LLM_KEY, TEST_LLM_MODEL, ScriptedLLMServer
from tests.support import REPO_ROOT

ASL = REPO_ROOT / "infra" / "statemachines" / "research.asl.json"
STEP_FUNCTION_ARN = f"arn:aws:lambda:{REGION}:123456789012:function:zengram-research-step:live"
MOTO_CONFIG: Any = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}
SAMPLE_TOPIC = "which decision superseded the caching approach, and what status did it leave the API in?"


@pytest.fixture
def llm_environment(lambda_environment: str, llm_server: ScriptedLLMServer,
                    monkeypatch: pytest.MonkeyPatch) -> ScriptedLLMServer:
    for name, value in {"ZENGRAM_LLM_BASE_URL": llm_server.base_url, "ZENGRAM_LLM_API_KEY": TEST_LLM_KEY,
                        "ZENGRAM_LLM_MODEL": TEST_LLM_MODEL, "ZENGRAM_LLM_MAX_RETRIES": "0",
                        "RESEARCH_ENABLED": "true"}.items():
        monkeypatch.setenv(name, value)
    return llm_server


@pytest.fixture
def step_container(llm_environment: ScriptedLLMServer, minilm: Embedder,
                   monkeypatch: pytest.MonkeyPatch) -> Iterator[Container]:
    """The research step function's container (a fresh execution environment), built from its environment."""
    provider = ContainerProvider(lambda: build_container(Settings(), embedder=minilm))
    # The function's handler over this container, as the module builds it over its own.
    monkeypatch.setattr(load_function_module("research_step"), "handler", research_step_handler(provider))
    yield provider.get()
    provider.close()


def call_step_function(body: bytes | str) -> tuple[bytes, str | None]:
    """What Lambda does with an invocation: run the handler; an exception becomes a function error payload."""
    try:
        answer = load_function_module("research_step").handler(json.loads(body), FakeLambdaContext())
    except Exception as error:  # the Lambda runtime reports any exception as {errorMessage, errorType}
        return json.dumps({"errorMessage": str(error), "errorType": type(error).__name__}).encode(), "Unhandled"
    return json.dumps(answer).encode(), None


@pytest.fixture
def state_machine(step_container: Container, minilm: Embedder,
                  monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The ASL deployed on moto with its substitution, the research API function pointed at it; yields the
    functions moto invoked."""
    from moto import mock_aws
    from moto.awslambda_simple.models import LambdaSimpleBackend
    from moto.stepfunctions.parser.utils import TMP_THREADS  # every thread moto starts to execute ASL

    invoked: list[str] = []
    threads_before = len(TMP_THREADS)

    def invoke_step_function(self: Any, function_name: str, qualifier: str | None, body: Any, headers: Any,
                             response_headers: dict[str, str]) -> bytes:
        invoked.append(function_name)
        payload, error = call_step_function(body)
        if error:
            response_headers["x-amz-function-error"] = error
        return payload

    monkeypatch.setattr(LambdaSimpleBackend, "invoke", invoke_step_function)
    with mock_aws(config=MOTO_CONFIG):
        import boto3

        sfn = boto3.client("stepfunctions", region_name=REGION)
        definition = ASL.read_text().replace("${ResearchStepFunctionArn}", STEP_FUNCTION_ARN)
        arn = sfn.create_state_machine(name="zengram-research", definition=definition, type="EXPRESS",
                                       roleArn="arn:aws:iam::123456789012:role/zengram-research")["stateMachineArn"]
        monkeypatch.setenv("ZENGRAM_RESEARCH_STATE_MACHINE_ARN", arn)
        monkeypatch.setenv("ZENGRAM_RESEARCH_EXECUTION", "poll")  # moto has no StartSyncExecution
        api = ContainerProvider(lambda: build_container(Settings(), embedder=minilm))
        load_function_module("research").app.state.provider = api
        yield invoked
        executions = sfn.list_executions(stateMachineArn=arn)["executions"]
        api.close()
    # Every execution the test started has ended, and so has every thread moto ran it on
    assert executions and all(execution["status"] != "RUNNING" for execution in executions)
    started = TMP_THREADS[threads_before:]
    for thread in started:
        thread.join(timeout=30)
    assert started and not any(thread.is_alive() for thread in started)


def store_caching_story(container: Container) -> dict[str, str]:
    drafts = {
        "decision": MemoryDraft(type=MemoryType.DECISION, source_agent="claude-code", client_id="acme-corp",
                                content="Decided to replace the Redis caching approach with HTTP cache headers"),
        "status": MemoryDraft(type=MemoryType.STATUS, source_agent="n8n", client_id="acme-corp",
                              subject="public-api", status_value="maintenance",
                              content="The public API is in maintenance mode after the caching change"),
        "event": MemoryDraft(type=MemoryType.EVENT, source_agent="n8n", client_id="acme-corp",
                             content="The Redis cluster was shut down on Friday"),
        "noise": MemoryDraft(type=MemoryType.EVENT, source_agent="n8n", client_id="acme-corp",
                             content="Quarterly planning moved to Thursday"),
    }
    return {name: container.memory.store(draft).memory.id for name, draft in drafts.items()}


def script(server: ScriptedLLMServer, ids: dict[str, str]) -> None:
    server.script(
        {"draft": f"Cache headers replaced Redis [mem:{ids['decision']}]", "status": "INSUFFICIENT",
         "reason": "the API status is not covered", "missing": ["public API status", "maintenance mode"]},
        # SUFFICIENT alone must end the loop: the named nice-to-have is not searched for
        {"draft": "complete", "status": "SUFFICIENT", "reason": "both hops answered",
         "missing": ["the exact end of maintenance"]},
        {"answer": f"HTTP cache headers superseded Redis [mem:{ids['decision']}] [mem:not-a-memory]; the API was "
                   f"left in maintenance [mem:{ids['status']}].",
         "key_findings": [f"Redis replaced [mem:{ids['decision']}]", f"API in maintenance [mem:{ids['status']}]"],
         "unresolved": ["when maintenance ends"]},
    )


def post_research() -> tuple[int, dict[str, Any]]:
    response = invoke("research", load_event("research/post_research.json"))
    return response["statusCode"], json.loads(response["body"])


def test_state_machine_run_equals_the_in_process_run(
    step_container: Container, state_machine: list[str], llm_environment: ScriptedLLMServer
) -> None:
    # Given the same memories and the same scripted model answers
    ids = store_caching_story(step_container)
    script(llm_environment, ids)
    request = ResearchRequest(topic=SAMPLE_TOPIC, client_id="acme-corp", max_iterations=3)
    in_process = research_body(step_container.research.run(request)).model_dump(mode="json")
    in_process_prompts = [r["messages"] for r in llm_environment.requests]
    llm_environment.reset()
    script(llm_environment, ids)

    # When the research function runs the state machine
    status, body = post_research()

    # Then it answers exactly what the embedded loop answered, after asking the model exactly the same
    assert status == 200, body
    assert body == in_process
    assert [r["messages"] for r in llm_environment.requests] == in_process_prompts
    assert body["iterations"] == 2 and body["partial"] is False
    assert body["cited_memory_ids"] == [ids["decision"], ids["status"]]
    assert body["llm"] == {"provider": "openai-compatible", "model": TEST_LLM_MODEL}
    # Retrieve, Judge, (Choice: insufficient, new query, budget left) Retrieve, Judge, (sufficient) Synthesize
    assert state_machine == [STEP_FUNCTION_ARN] * 5


def test_a_step_error_fails_the_execution_with_the_same_status(
    step_container: Container, state_machine: list[str], llm_environment: ScriptedLLMServer
) -> None:
    store_caching_story(step_container)
    llm_environment.script("not json", "still not json")
    status, body = post_research()
    assert status == 502 and list(body) == ["error"]
    assert state_machine == [STEP_FUNCTION_ARN] * 2  # Retrieve, then Judge failed: no retry of a domain error


def test_the_budget_ends_the_machine_with_a_partial_answer(
    step_container: Container, state_machine: list[str], llm_environment: ScriptedLLMServer
) -> None:
    store_caching_story(step_container)
    insufficient = {"draft": "", "status": "INSUFFICIENT", "reason": "gap", "missing": []}
    llm_environment.script({**insufficient, "missing": ["Redis cluster"]}, {**insufficient, "missing": ["Friday"]},
                           {**insufficient, "missing": ["planning"]},
                           {"answer": "Partly known.", "key_findings": [], "unresolved": ["the API status"]})
    status, body = post_research()  # the sample asks for at most 3 rounds
    assert status == 200, body
    assert body["iterations"] == 3 and body["partial"] is True
    assert [trace["query"] for trace in body["query_trace"]] == [SAMPLE_TOPIC, "Redis cluster", "Friday"]


def test_step_sample_events(step_container: Container) -> None:
    handler = load_function_module("research_step").handler
    retrieved = handler(load_event("research_step/retrieve.json"), FakeLambdaContext())
    assert retrieved["iterations"] == 1 and retrieved["query_trace"][0]["query"] == SAMPLE_TOPIC
    with pytest.raises(ValueError, match="unknown research step"):
        handler({**load_event("research_step/retrieve.json"), "step": "reflect"}, FakeLambdaContext())


def test_research_function_sample_events(lambda_environment: str, minilm: Embedder,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    provider = ContainerProvider(lambda: build_container(Settings(), embedder=minilm))
    load_function_module("research").app.state.provider = provider
    try:
        response = invoke("research", load_event("research/post_research.json"))
        assert response["statusCode"] == 503  # RESEARCH_ENABLED is not set
        monkeypatch.setenv("RESEARCH_ENABLED", "true")
        provider.close()
        response = invoke("research", load_event("research/post_research_invalid.json"))
        assert response["statusCode"] == 400 and json.loads(response["body"])["error"].startswith("max_iterations:")
    finally:
        provider.close()
