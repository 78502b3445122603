"""The OpenAPI document states the rules the server enforces: for each body below, the document's own JSON
Schema and the server agree on whether it is valid, so a client generated from the document never sends a
"valid" request that gets a 400 (nor an invalid one that is taken)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from jsonschema import Draft202012Validator, FormatChecker
from zengram.assembly.containers import Container, build_container
from zengram.embedded.app import build_embedded_app
from zengram.settings import Settings

from tests.support import API_KEY, HashingEmbedder, TickingClock


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("doc") / "data", api_key=API_KEY, rate_limit_enabled=False)
    container = build_container(settings, embedder=HashingEmbedder(), clock=TickingClock())
    try:
        with TestClient(build_embedded_app(settings, container), headers={"x-api-key": API_KEY}) as client:
            body: dict[str, Any] = client.get("/openapi.json").json()
            return body
    finally:
        container.close()


@pytest.fixture
def api(settings: Settings, hashing_container: Container) -> Iterator[TestClient]:
    with TestClient(build_embedded_app(settings, hashing_container), headers={"x-api-key": API_KEY}) as client:
        yield client


def body_schema_accepts(document: dict[str, Any], method: str, path: str, body: Any) -> bool:
    operation = document["paths"][path][method.lower()]
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    validator = Draft202012Validator({**schema, "components": document["components"]}, format_checker=FormatChecker())
    return bool(validator.is_valid(body))


def event(**fields: Any) -> dict[str, Any]:
    return {"type": "event", "content": "Acme's kickoff call is on Monday", "source_agent": "claude-code", **fields}


BODIES = [
    # blank text: the pattern says what `not_blank` refuses, to the character (U+001C is blank to Python)
    ("POST", "/memory", event(content="   ")),
    ("POST", "/memory", event(content="\x1c\u3000")),
    ("POST", "/memory", event(content="\ufeffAcme")),
    # `key` only with facts, `subject` and `status_value` only with statuses
    ("POST", "/memory", event(key="acme-stack")),
    ("POST", "/memory", event(type="fact", key="acme-stack")),
    ("POST", "/memory", event(type="fact", subject="deploy")),
    ("POST", "/memory", event(status_value="green")),
    ("POST", "/memory", event(type="status", subject="deploy", status_value="green")),
    ("POST", "/memory", event(key=None, subject=None)),
    # metadata: three levels of objects and arrays, no more
    ("POST", "/memory", event(metadata={"a": {"b": [1, "two", None, True]}})),
    ("POST", "/memory", event(metadata={"a": {"b": [[1]]}})),
    ("POST", "/memory", event(metadata={"a": [{"b": {}}]})),
    # PATCH: at least one field that is not null
    ("PATCH", "/memory/{memory_id}", {}),
    ("PATCH", "/memory/{memory_id}", {"content": None, "metadata": None}),
    ("PATCH", "/memory/{memory_id}", {"unknown": 1}),
    ("PATCH", "/memory/{memory_id}", {"importance": "high"}),
    ("PATCH", "/memory/{memory_id}", {"content": " "}),
    # client fingerprints: no blank name or entry
    ("PUT", "/clients/{client_id}", {"name": "  "}),
    ("PUT", "/clients/{client_id}", {"aliases": ["Acme", "\x1f"]}),
    ("PUT", "/clients/{client_id}", {"name": "Acme Corp", "aliases": ["ACME"]}),
    # reclassify: a JSON boolean for dry_run, a name with text
    ("POST", "/entities/reclassify", {"reclassifications": [{"name": "Stripe", "new_type": "system"}], "dry_run": 0}),
    ("POST", "/entities/reclassify", {"reclassifications": [{"name": " ", "new_type": "system"}]}),
    ("POST", "/entities/reclassify", {"reclassifications": [{"name": "Stripe", "new_type": "system"}],
                                      "dry_run": True}),
    # integers as JSON Schema counts them: 5.0 is one, "5" and true are not
    ("POST", "/reflect", {"topic": "Acme's tech stack", "limit": 5.0}),
    ("POST", "/reflect", {"topic": "Acme's tech stack", "limit": "5"}),
    ("POST", "/reflect", {"topic": "Acme's tech stack", "limit": True}),
    ("POST", "/reflect", {"topic": " ", "limit": 5}),
    # import: a JSON boolean for operator_approved
    ("POST", "/export/import", {"operator_approved": "yes", "data": []}),
    ("POST", "/export/import", {"operator_approved": True, "data": []}),
]


@pytest.mark.parametrize(("method", "path", "body"), BODIES, ids=[f"{m} {p} {b}" for m, p, b in BODIES])
def test_the_document_and_the_server_agree_on_a_body(
    document: dict[str, Any], api: TestClient, method: str, path: str, body: Any
) -> None:
    stored = api.post("/memory", json=event(content="Acme's deploy pipeline is green"))
    url = path.format(memory_id=stored.json()["id"], client_id="acme-corp")

    response = api.request(method, url, json=body)

    schema_says_valid = body_schema_accepts(document, method, path, body)
    assert str(response.status_code) in document["paths"][path][method.lower()]["responses"], response.text
    assert (response.status_code != 400) == schema_says_valid, (schema_says_valid, response.text)


def test_the_document_states_its_cross_field_rules_in_words(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    query = {parameter["name"]: parameter for parameter in document["paths"]["/memory/query"]["get"]["parameters"]}

    assert "later than valid_from" in schemas["MemoryDraft"]["properties"]["valid_to"]["description"]
    assert "type=facts" in query["key"]["description"] and "type=statuses" in query["subject"]["description"]


def references(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from references(value)
    elif isinstance(node, list):
        for item in node:
            yield from references(item)


def test_every_error_response_names_the_error_body_the_document_defines(document: dict[str, Any]) -> None:
    """Error responses name ErrorBody by reference (`documented_error`, so FastAPI builds no serializer per route
    and status); the app adds its definition, and every other reference resolves too."""
    defined = {f"#/components/schemas/{name}" for name in document["components"]["schemas"]}
    assert set(references(document["paths"])) <= defined
    not_found = document["paths"]["/memory/{memory_id}"]["get"]["responses"]["404"]
    assert not_found["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorBody"}
    assert document["components"]["schemas"]["ErrorBody"]["required"] == ["error"]
    assert list(document["components"]["schemas"]) == sorted(document["components"]["schemas"])
