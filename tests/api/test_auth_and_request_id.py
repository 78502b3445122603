"""GET /health, the x-api-key gate on every other route, and x-request-id on every response."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import Container
from zengram.web.middleware import MISSING_KEY

from tests.api.helpers import TIMESTAMP, UUID, assert_error, memory, query, store
from tests.support import API_KEY

SOME_ID = "0b7e3f9a-58f4-4a53-9d3c-0e6a2b1f4c11"

PROTECTED_CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("POST", "/memory", {"json": memory("Acme renewed its annual contract")}),
    ("GET", "/memory/search", {"params": {"q": "contract renewal"}}),
    ("GET", "/memory/query", {"params": {"type": "facts"}}),
    ("GET", f"/memory/{SOME_ID}", {}),
    ("PATCH", f"/memory/{SOME_ID}", {"json": {"importance": "high"}}),
    ("DELETE", f"/memory/{SOME_ID}", {}),
    ("POST", f"/memory/{SOME_ID}/restore", {}),
    ("GET", "/openapi.json", {}),
    ("GET", "/no-such-route", {}),
    ("GET", "/health/", {}),
]


@pytest.fixture(scope="module")
def anonymous(shared_client: TestClient) -> TestClient:
    """A client over the same app that sends no x-api-key at all."""
    return TestClient(shared_client.app)


def test_health_answers_without_a_key(anonymous: TestClient) -> None:
    response = anonymous.get("/health")

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["service"] == "zengram"
    assert TIMESTAMP.match(body["timestamp"]), body["timestamp"]
    assert UUID.match(response.headers["x-request-id"])


def test_health_ignores_a_wrong_key(shared_client: TestClient) -> None:
    assert shared_client.get("/health", headers={"x-api-key": "not-the-key"}).status_code == 200


@pytest.mark.parametrize(("method", "path", "kwargs"), PROTECTED_CALLS, ids=lambda v: str(v)[:40])
def test_protected_routes_refuse_a_missing_key(
    anonymous: TestClient, method: str, path: str, kwargs: dict[str, Any]
) -> None:
    response = anonymous.request(method, path, **kwargs)

    message = assert_error(response, 401)
    assert "x-api-key" in message


@pytest.mark.parametrize("bad_key", ["", "wrong-key", API_KEY + "x", API_KEY[:-1], API_KEY.upper()])
@pytest.mark.parametrize(("method", "path", "kwargs"), PROTECTED_CALLS[:4], ids=lambda v: str(v)[:40])
def test_protected_routes_refuse_a_wrong_key(
    shared_client: TestClient, method: str, path: str, kwargs: dict[str, Any], bad_key: str
) -> None:
    response = shared_client.request(method, path, headers={"x-api-key": bad_key}, **kwargs)

    assert_error(response, 401)


def test_a_refused_write_stores_nothing(client: TestClient) -> None:
    response = client.post(
        "/memory", json=memory("Globex signed the statement of work", type="decision"),
        headers={"x-api-key": "stolen-guess"},
    )

    assert_error(response, 401)
    assert query(client, type="decisions")["count"] == 0


def test_the_right_key_opens_every_route(client: TestClient) -> None:
    created = store(client, "Acme moved the weekly sync to Thursdays")

    assert client.get(f"/memory/{created['id']}").status_code == 200
    assert client.get("/openapi.json").status_code == 200


def test_unknown_route_with_the_key_is_a_404_error_body(shared_client: TestClient) -> None:
    assert_error(shared_client.get("/memories/all"), 404)


def test_wrong_method_is_an_error_body(shared_client: TestClient) -> None:
    assert_error(shared_client.put("/memory/" + SOME_ID, json={"content": "x"}), 405)


# -- x-request-id ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "given", ["req-42", "a1b2c3d4.trace:span_7", "x" * 128, "7f3c9e1a-2b4d-4c5e-8f60-1a2b3c4d5e6f"]
)
def test_a_sane_request_id_is_echoed(shared_client: TestClient, given: str) -> None:
    response = shared_client.get("/health", headers={"x-request-id": given})

    assert response.headers["x-request-id"] == given


@pytest.mark.parametrize(
    "given", [b"", b"x" * 129, b"has space", b"semi;colon", b"tab\there", b'quote"d', b"/path", "über".encode()]
)
def test_an_unsafe_request_id_is_replaced_by_a_generated_one(shared_client: TestClient, given: bytes) -> None:
    response = shared_client.get("/health", headers={"x-request-id": given})

    returned = response.headers["x-request-id"]
    assert returned.encode("latin-1") != given
    assert UUID.match(returned), returned


def test_a_generated_request_id_differs_per_request(shared_client: TestClient) -> None:
    ids = {shared_client.get("/health").headers["x-request-id"] for _ in range(5)}

    assert len(ids) == 5
    assert all(UUID.match(value) for value in ids)


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status"),
    [
        ("GET", "/memory/search", {"params": {"q": "deploy"}}, 200),
        ("POST", "/memory", {"json": memory("Initech migrated payroll to Gusto")}, 201),
        ("POST", "/memory", {"json": {"type": "event"}}, 400),
        ("GET", f"/memory/{SOME_ID}", {}, 404),
        ("GET", "/nowhere", {}, 404),
        ("DELETE", "/memory", {}, 405),
    ],
)
def test_the_request_id_is_echoed_on_every_status(
    shared_client: TestClient, method: str, path: str, kwargs: dict[str, Any], status: int
) -> None:
    response = shared_client.request(method, path, headers={"x-request-id": "trace-0001"}, **kwargs)

    assert response.status_code == status
    assert response.headers["x-request-id"] == "trace-0001"


@pytest.mark.parametrize("path", ["/memory/search?q=x", "/unknown"])
def test_the_request_id_is_echoed_on_a_401(anonymous: TestClient, path: str) -> None:
    response = anonymous.get(path, headers={"x-request-id": "trace-401"})

    assert response.status_code == 401
    assert response.headers["x-request-id"] == "trace-401"


def test_a_401_without_request_id_gets_a_generated_one(anonymous: TestClient) -> None:
    response = anonymous.post("/memory", json=memory("anything at all"))

    assert response.status_code == 401
    assert UUID.match(response.headers["x-request-id"])


def test_an_unexpected_failure_is_a_500_error_body_with_the_request_id(
    client: TestClient, container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*_: object, **__: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(container.memory, "get", fail)
    tolerant = TestClient(client.app, headers={"x-api-key": API_KEY}, raise_server_exceptions=False)

    response = tolerant.get(f"/memory/{SOME_ID}", headers={"x-request-id": "trace-500"})

    assert response.status_code == 500
    assert response.json() == {"error": "internal server error"}
    assert response.headers.get("x-request-id") == "trace-500"


@pytest.mark.parametrize("headers", [{"authorization": f"Bearer {API_KEY}"}, {"x-mnexium-key": API_KEY}],
                         ids=["bearer", "mnexium"])
def test_the_document_and_chat_clients_headers_carry_the_key_too(anonymous: TestClient,
                                                                 headers: dict[str, str]) -> None:
    assert anonymous.get("/stats", headers=headers).status_code == 200
    wrong = {name: value.replace(API_KEY, "wrong-key") for name, value in headers.items()}
    assert assert_error(anonymous.get("/stats", headers=wrong), 401) == "invalid API key"
    assert assert_error(anonymous.get("/stats", headers={"authorization": f"Basic {API_KEY}"}), 401) == MISSING_KEY
