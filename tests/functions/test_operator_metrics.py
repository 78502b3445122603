"""The metrics an operator watches, as the functions emit them (CloudWatch EMF lines on stdout): writes and
searches the API answered, and LLM calls that failed. The repair backlog is in test_repair_function.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel
from zengram.adapters.aws_lambda.metrics import LLM_FAILURES, MeteredLanguageModel
from zengram.assembly.provider import ContainerProvider
from zengram.kernel.errors import LLMInvalidResponse, LLMUnavailable
from zengram.memory.domain.requests import MemoryDraft
from zengram.serverless.handlers import lambda_container

from tests.functions.invoke import invoke, load_event, load_function_module
from tests.functions.test_repair_function import emitted_metrics
from tests.llm_server import TEST_LLM_KEY, TEST_LLM_MODEL, ScriptedLLMServer


@pytest.fixture
def metered(lambda_environment: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[ContainerProvider]:
    """The memory and reflect functions on one container built as on Lambda (its LLM metered), without an LLM."""
    for name in ("ZENGRAM_LLM_BASE_URL", "LLM_BASE_URL", "ZENGRAM_LLM_API_KEY", "LLM_API_KEY", "OPENAI_API_KEY",
                 "ZENGRAM_LLM_API_KEY_SECRET_ID"):
        monkeypatch.delenv(name, raising=False)
    provider = ContainerProvider(lambda_container)
    for group in ("memory", "reflect"):
        monkeypatch.setattr(load_function_module(group).app.state, "provider", provider, raising=False)
    yield provider
    provider.close()


def call(group: str, sample: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, list[float]]]:
    capsys.readouterr()
    response = invoke(group, load_event(sample))
    metrics = emitted_metrics(capsys.readouterr().out)
    return response["statusCode"], metrics


def test_a_stored_memory_counts_as_a_write_and_a_search_as_a_search(
    metered: ContainerProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    assert call("memory", "memory/post_memory.json", capsys) == (201, {"MemoryWrites": [1.0]})
    assert call("memory", "memory/get_search.json", capsys) == (200, {"Searches": [1.0]})


def test_refused_requests_count_nothing(metered: ContainerProvider, capsys: pytest.CaptureFixture[str]) -> None:
    assert call("memory", "memory/post_memory_invalid.json", capsys) == (400, {})
    assert call("memory", "memory/get_search_unauthenticated.json", capsys) == (401, {})


def test_an_llm_call_that_fails_counts_as_an_llm_failure(lambda_environment: str, llm_server: ScriptedLLMServer,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in {"ZENGRAM_LLM_BASE_URL": llm_server.base_url, "ZENGRAM_LLM_API_KEY": TEST_LLM_KEY,
                        "ZENGRAM_LLM_MODEL": TEST_LLM_MODEL, "ZENGRAM_LLM_MAX_RETRIES": "0"}.items():
        monkeypatch.setenv(name, value)
    provider = ContainerProvider(lambda_container)
    monkeypatch.setattr(load_function_module("reflect").app.state, "provider", provider, raising=False)
    try:
        provider.get().memory.store(MemoryDraft.model_validate({
            "type": "event", "content": "The deployment pipeline failed on a migration timeout",
            "source_agent": "n8n", "client_id": "acme-corp"}))
        llm_server.script("not json", "still not json")
        status, metrics = call("reflect", "reflect/post_reflect.json", capsys)
    finally:
        provider.close()
    assert status == 502 and metrics == {LLM_FAILURES: [1.0]}


class Answer(BaseModel):
    text: str


class ScriptedModel:
    provider, model = "openai-compatible", "test-model"

    def __init__(self, outcome: Exception | Answer) -> None:
        self.outcome = outcome

    def complete_json(self, system: str, user: str, schema: type[Any]) -> Any:
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


@pytest.mark.parametrize("failure", [LLMUnavailable("the endpoint timed out"), LLMInvalidResponse("not JSON")])
def test_the_metered_model_counts_failures_and_passes_them_on(failure: Exception, lambda_environment: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from zengram.adapters.aws_lambda.metrics import shared_metrics

    model = MeteredLanguageModel(ScriptedModel(failure))
    assert (model.provider, model.model) == ("openai-compatible", "test-model")
    with pytest.raises(type(failure)):
        model.complete_json("system", "user", Answer)
    assert MeteredLanguageModel(ScriptedModel(Answer(text="ok"))).complete_json("s", "u", Answer).text == "ok"
    shared_metrics().flush_metrics()
    assert emitted_metrics(capsys.readouterr().out) == {LLM_FAILURES: [1.0]}


def test_emf_lines_name_the_namespace_the_template_gives(lambda_environment: str, metered: ContainerProvider,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    invoke("memory", load_event("memory/post_memory.json"))
    blobs = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"_aws"')]
    assert {directive["Namespace"] for blob in blobs for directive in blob["_aws"]["CloudWatchMetrics"]} == {
        "ZengramTest"}
