"""Property-based run over the app's own OpenAPI document: no input may make any operation answer 5xx, every
response must match the document, schema-valid requests must be taken and schema-violating ones refused.

The schema is read from the ASGI app in-process (the `client` fixture's app, so every operation gets a fresh data
folder). Path ids are either generated (the API answers 404, which is fine) or ids of seeded memories, so PATCH,
DELETE and restore also run their real validation and conflict paths. The only failures accepted are the ones
`tests/fuzz/rules.py` explains (rules OpenAPI cannot state as a schema; the LLM operations' documented 502/503).

One test per operation and generation mode, bounded and derandomised so the run is quick and repeatable:
ZENGRAM_FUZZ_EXAMPLES examples each (default 20: about 800 cases); `make fuzz` runs the CLI's every phase.
(`schemathesis.pytest.from_fixture(...).parametrize()` fails under pytest 9.2 with "'Function' object has no
attribute '_nodeid'", hence the explicit strategies.)
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.python.asgi import shutdown_lifespans
from zengram.chat.api.roles import CHAT_ROUTE_ROLES

from tests.fuzz.rules import accepted_reason
from tests.support import API_KEY

AUTH = {"x-api-key": API_KEY}
ENDLESS = ("GET", "/api/v1/events/memories")
OPERATIONS = [
    ("GET", "/health"),
    ("POST", "/memory"),
    ("GET", "/memory/search"),
    ("GET", "/memory/query"),
    ("GET", "/memory/{memory_id}"),
    ("GET", "/memory/{memory_id}/history"),
    ("PATCH", "/memory/{memory_id}"),
    ("DELETE", "/memory/{memory_id}"),
    ("POST", "/memory/{memory_id}/restore"),
    ("GET", "/briefing"),
    ("GET", "/stats"),
    ("GET", "/export"),
    ("POST", "/export/import"),
    ("PUT", "/clients/{client_id}"),
    ("GET", "/clients/{client_id}"),
    ("DELETE", "/clients/{client_id}"),
    ("GET", "/clients"),
    ("GET", "/entities"),
    ("GET", "/entities/stats"),
    ("GET", "/entities/graph"),
    ("GET", "/entities/{name}"),
    ("GET", "/entities/{name}/memories"),
    ("POST", "/entities/reclassify"),
    ("DELETE", "/entities/{name}"),
    ("POST", "/entities/{name}/merge"),
    ("GET", "/collections"),
    ("POST", "/collections"),
    ("GET", "/collections/{name}"),
    ("DELETE", "/collections/{name}"),
    ("POST", "/consolidate"),
    ("GET", "/consolidate/job/{job_id}"),
    ("GET", "/consolidate/status"),
    ("POST", "/reflect"),
    ("POST", "/research"),
    ("POST", "/admin/keys"),
    ("GET", "/admin/keys"),
    ("DELETE", "/admin/keys/{key_id}"),
    # the chat layer's routes (api/chat/roles.py), but the memory event stream: it streams until the client leaves
    # (tests/api/chat/test_events.py and tests/clients/test_mnexium_sdk_events.py hold it to its rules)
    *(route for route in CHAT_ROUTE_ROLES if route != ENDLESS),
]
ERROR_EXTRAS = {"limit", "window_seconds", "message"}  # 429's budget; research_disabled's words
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_headers_conformance,
          response_schema_conformance, negative_data_rejection, positive_data_acceptance]
EXAMPLES = int(os.environ.get("ZENGRAM_FUZZ_EXAMPLES", "20"))
SEED = [
    {"type": "fact", "content": "Acme Corp uses Next.js 14 with App Router", "source_agent": "claude-code",
     "client_id": "acme-corp", "key": "acme-tech-stack", "importance": "high"},
    {"type": "fact", "content": "Acme Corp moved to Remix", "source_agent": "claude-code",
     "client_id": "acme-corp", "key": "acme-tech-stack"},
    {"type": "status", "content": "Deploy pipeline is green", "source_agent": "n8n",
     "subject": "deploy-pipeline", "status_value": "green"},
    {"type": "event", "content": "Globex kickoff call held on Monday", "source_agent": "cursor",
     "client_id": "globex", "metadata": {"attendees": ["Hank", "Dana"]}},
]


@pytest.fixture
def seeded_ids(client: TestClient) -> list[str]:
    """A little data, so searches and queries rank and serialise real records; the first fact is superseded."""
    ids = []
    for body in SEED:
        response = client.post("/memory", json=body)
        assert response.status_code == 201, response.text
        ids.append(response.json()["id"])
    return ids


@pytest.fixture
def zengram_schema(client: TestClient) -> Iterator[schemathesis.BaseSchema]:
    schema = schemathesis.openapi.from_asgi("/openapi.json", client.app, headers=AUTH)
    schema.hook("filter_failure")(_accept_only_the_stated_exceptions)
    try:
        yield schema
    finally:
        # schemathesis keeps the app's lifespan running for the rest of the process; end it with this test.
        shutdown_lifespans()


# Negative generation needs something to break: a body or a constrained query. GET /health, GET /memory/{id} and
# the restore call take neither (their only input is a free-form path string), so they run positive cases only.
NEGATABLE = {("POST", "/memory"), ("GET", "/memory/search"), ("GET", "/memory/query"),
             ("PATCH", "/memory/{memory_id}"), ("DELETE", "/memory/{memory_id}"),
             ("GET", "/briefing"), ("GET", "/export"), ("POST", "/export/import"),
             ("PUT", "/clients/{client_id}"),
             ("GET", "/entities"), ("GET", "/entities/graph"), ("GET", "/entities/{name}/memories"),
             ("POST", "/entities/reclassify"), ("POST", "/entities/{name}/merge"), ("POST", "/collections"),
             ("POST", "/consolidate"), ("POST", "/reflect"), ("POST", "/admin/keys"),
             # the chat layer: every route takes a constrained query, header or body but the two unconstrained lists
             *(route for route in CHAT_ROUTE_ROLES if route not in {("GET", "/api/v1/prompts"),
                                                                     ("GET", "/api/v1/records/schemas"),
                                                                     ("GET", "/api/v1/profiles/schema"), ENDLESS})}
CASES = [
    pytest.param(method, path, mode, id=f"{method} {path} {mode.value}")
    for method, path in OPERATIONS
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
    if mode is GenerationMode.POSITIVE or (method, path) in NEGATABLE
]


@pytest.mark.parametrize(("method", "path", "mode"), CASES)
def test_no_operation_answers_with_a_server_error(
    zengram_schema: schemathesis.BaseSchema, seeded_ids: list[str], method: str, path: str, mode: GenerationMode
) -> None:
    operation = zengram_schema[path][method]
    strategies = [operation.as_strategy(generation_mode=mode)]
    if "{memory_id}" in path:
        strategies += [operation.as_strategy(generation_mode=mode, path_parameters={"memory_id": memory_id})
                       for memory_id in seeded_ids]

    @given(case=st.one_of(strategies))
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    def conforms(case: schemathesis.Case) -> None:
        _send_the_key_unless_negated(case)
        response = case.call_and_validate(checks=CHECKS)
        if response.status_code >= 400:  # `{"error"}`, plus upstream's extra fields where it has them
            body = response.json()
            assert next(iter(body)) == "error" and set(body) - {"error"} <= ERROR_EXTRAS, response.text

    conforms()


def _send_the_key_unless_negated(case: schemathesis.Case) -> None:
    """The document declares the x-api-key header; a generated value stands for "the key", so it becomes the real
    one. A case that drops or mangles the header keeps it that way: it must get its 401."""
    assert case.meta is not None
    header_negated = any(location.value == "header" and component.mode is GenerationMode.NEGATIVE
                         for location, component in case.meta.components.items())
    if not header_negated:
        case.headers = {**(case.headers or {}), **AUTH}


def _accept_only_the_stated_exceptions(_: Any, failure: Any, case: Any, response: Any) -> bool:
    try:
        body = json.loads(response.content)
    except ValueError:
        body = None
    reason = accepted_reason(case.operation.method, case.operation.path, failure.code, response.status_code, body)
    return reason is None


def test_the_fuzzed_operations_are_all_the_operations(client: TestClient) -> None:
    document = client.get("/openapi.json").json()

    assert {(method.upper(), path) for path, item in document["paths"].items() for method in item} == {
        *OPERATIONS, ENDLESS}  # the endless stream is tested on its own (tests/api/chat/test_events.py)
