"""One Powertools logger per execution environment, shared with the services: their `zengram.*` log lines leave as
Powertools JSON at ZENGRAM_LOG_LEVEL, each with the request's correlation id (the API's request id)."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from zengram.kernel.keys import TenantScope
from zengram.memory.api import memory as memory_routes
from zengram.memory.domain.models import Memory
from zengram.memory.services.memory import MemoryService
from zengram.serverless import handlers as serverless

from tests.functions.invoke import FakeLambdaContext, load_event
from tests.support import REPO_ROOT


@pytest.fixture
def handler(lambda_environment: str, monkeypatch: pytest.MonkeyPatch) -> serverless.LambdaHandler:
    """A fresh execution environment of the memory function whose MemoryService logs each read at INFO."""
    monkeypatch.setattr(serverless, "OBSERVABILITY", serverless.LambdaObservability())
    # Powertools keeps one stdlib logger per service name, writing to the stdout of its first test: a name of our own
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", f"zengram-memory-{uuid.uuid4().hex[:8]}")
    reading = MemoryService.get

    def logged_get(self: MemoryService, memory_id: str, scope: TenantScope = TenantScope.EVERYONE) -> Memory:
        logging.getLogger("zengram.memory.services.memory").info("reading memory %s", memory_id)
        return reading(self, memory_id, scope)

    monkeypatch.setattr(MemoryService, "get", logged_get)
    return serverless.http_handler(serverless.create_function_app([memory_routes.router]))


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_a_service_log_line_is_powertools_json_with_the_request_id(
    handler: serverless.LambdaHandler, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ZENGRAM_LOG_LEVEL", "INFO")
    response = handler(load_event("memory/get_memory.json"), FakeLambdaContext())

    assert response["statusCode"] == 404 and response["headers"]["x-request-id"] == "sample-get-1"
    out = capsys.readouterr().out
    [line] = [line for line in json_lines(out) if str(line.get("message")).startswith("reading memory")]
    assert line["message"] == "reading memory SAMPLE-ID" and line["level"] == "INFO"
    assert line["correlation_id"] == "sample-get-1"  # the x-request-id the caller sent and got back
    assert line["function_request_id"] == FakeLambdaContext.aws_request_id


def test_without_a_caller_id_the_request_id_is_api_gateways(
    handler: serverless.LambdaHandler, capsys: pytest.CaptureFixture[str],
) -> None:
    event = load_event("memory/get_memory.json")
    del event["headers"]["x-request-id"]

    response = handler(event, FakeLambdaContext())

    assert response["headers"]["x-request-id"] == "sample-get-1-apigw"
    [line] = [line for line in json_lines(capsys.readouterr().out)
              if str(line.get("message")).startswith("reading memory")]
    assert line["correlation_id"] == "sample-get-1-apigw"


def test_zengram_log_level_applies_to_the_services(
    handler: serverless.LambdaHandler, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ZENGRAM_LOG_LEVEL", "WARNING")
    handler(load_event("memory/get_memory.json"), FakeLambdaContext())

    assert not [line for line in json_lines(capsys.readouterr().out) if "reading memory" in str(line.get("message"))]
    assert logging.getLogger("zengram").level == logging.WARNING


FIRST_INVOCATION = """
import json, sys
import functions.health.app as health
from tests.functions.invoke import FakeLambdaContext, load_event
from tests.support import REPO_ROOT
response = health.handler(load_event("health/get_health.json"), FakeLambdaContext())
print(json.dumps([response["statusCode"], "aws_xray_sdk" in sys.modules]))
"""


@pytest.mark.parametrize(("tracing_disabled", "xray_loaded"), [("true", False), ("false", True)])
def test_the_tracer_is_built_on_the_first_invocation_and_only_when_tracing_is_on(
    tmp_path: Path, tracing_disabled: str, xray_loaded: bool,
) -> None:
    environment = {**{name: value for name, value in os.environ.items() if not name.startswith(("ZENGRAM_", "AWS_"))},
                   "PYTHONPATH": str(REPO_ROOT), "POWERTOOLS_TRACE_DISABLED": tracing_disabled,
                   "POWERTOOLS_METRICS_NAMESPACE": "ZengramTest", "AWS_REGION": "eu-west-1",
                   "BRAIN_API_KEY": "sample-api-key", "ZENGRAM_DATA_DIR": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", FIRST_INVOCATION], capture_output=True, text=True,
                            env=environment, cwd=REPO_ROOT, check=False)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == [200, xray_loaded]
