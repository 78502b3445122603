"""The health function answers its API Gateway event exactly as the embedded server does: its dependencies'
`checks` from the records table (moto), the index and the embedder."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from zengram.assembly.provider import ContainerProvider
from zengram.web.middleware import MISSING_KEY

from tests.functions.conftest import fresh_container_for
from tests.functions.invoke import invoke, load_event


@pytest.fixture
def provider(lambda_environment: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[ContainerProvider]:
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "zengram-health")
    fresh = fresh_container_for("health")
    yield fresh
    fresh.close()


def test_health_event_returns_ok_without_a_key(provider: ContainerProvider) -> None:
    response = invoke("health", load_event("health/get_health.json"))
    assert response["statusCode"] == 200, response["body"]
    body = json.loads(response["body"])
    assert body["status"] == "ok" and body["service"] == "zengram"
    assert body["checks"] == {"records": "up", "search_index": "up", "embeddings": "up"}
    assert response["headers"]["x-request-id"] == "sample-health-1"


def test_a_records_table_that_is_gone_is_503_degraded(provider: ContainerProvider,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZENGRAM_DYNAMODB_TABLE", "no-such-table")
    gone = fresh_container_for("health")
    try:
        response = invoke("health", load_event("health/get_health.json"))
    finally:
        gone.close()
    assert response["statusCode"] == 503
    body = json.loads(response["body"])
    assert body["status"] == "degraded" and body["checks"]["records"] == "down"
    assert body["checks"]["embeddings"] == "up"


def test_any_other_path_needs_the_key(provider: ContainerProvider) -> None:
    event = load_event("health/get_health.json", rawPath="/memory/search", routeKey="GET /memory/search")
    event["requestContext"]["http"]["path"] = "/memory/search"
    response = invoke("health", event)
    assert response["statusCode"] == 401
    assert json.loads(response["body"]) == {"error": MISSING_KEY}
