"""The health function answers its API Gateway event exactly as the embedded server does."""

from __future__ import annotations

import json

import pytest
from zengram.api.middleware import MISSING_KEY

from tests.functions.invoke import invoke, load_event


@pytest.fixture(autouse=True)
def lambda_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "ZengramTest")
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "zengram-health")


def test_health_event_returns_ok_without_a_key() -> None:
    response = invoke("health", load_event("health/get_health.json"))
    assert response["statusCode"] == 200
    body = json.loads(response["body"])
    assert body["status"] == "ok" and body["service"] == "zengram"
    assert response["headers"]["x-request-id"] == "sample-health-1"


def test_any_other_path_needs_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAIN_API_KEY", "lambda-key")
    event = load_event("health/get_health.json", rawPath="/memory/search", routeKey="GET /memory/search")
    event["requestContext"]["http"]["path"] = "/memory/search"
    response = invoke("health", event)
    assert response["statusCode"] == 401
    assert json.loads(response["body"]) == {"error": MISSING_KEY}
