"""Small helpers shared by the API suites: terse calls and the error-shape assertion."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import httpx
from fastapi.testclient import TestClient

TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def memory(content: str, *, type: str = "event", source_agent: str = "claude-code", **fields: Any) -> dict[str, Any]:
    """A POST /memory body."""
    return {"type": type, "content": content, "source_agent": source_agent, **fields}


def store(client: TestClient, content: str, *, expect: int | None = 201, **fields: Any) -> dict[str, Any]:
    """Stores one memory and returns the response body; checks the status unless `expect` is None."""
    response = client.post("/memory", json=memory(content, **fields))
    if expect is not None:
        assert response.status_code == expect, response.text
    body: dict[str, Any] = response.json()
    return body


def get(client: TestClient, memory_id: str) -> dict[str, Any]:
    response = client.get(f"/memory/{memory_id}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def search(client: TestClient, q: str, **params: Any) -> dict[str, Any]:
    response = client.get("/memory/search", params={"q": q, **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["count"] == len(body["results"])
    return body


def search_ids(client: TestClient, q: str, **params: Any) -> list[str]:
    return [hit["id"] for hit in search(client, q, limit=100, **params)["results"]]


def query(client: TestClient, **params: Any) -> dict[str, Any]:
    response = client.get("/memory/query", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def expected_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()[:16]


# Error statuses whose body carries fields besides `error`, as upstream Zengram's do.
ERROR_EXTRAS = {429: ["limit", "window_seconds"]}


def assert_error(response: httpx.Response, status: int, field: str | None = None) -> str:
    """The response is `{"error": "..."}` with `status` (a 429 also with its `limit` and `window_seconds`); when
    `field` is given, the message names it first."""
    assert response.status_code == status, response.text
    body = response.json()
    assert list(body) == ["error", *ERROR_EXTRAS.get(status, [])], body
    message = body["error"]
    assert isinstance(message, str) and message.strip()
    if field is not None:
        assert message.startswith(f"{field}:"), f"expected the error to name {field!r}: {message!r}"
    assert response.headers.get("x-request-id")
    return message
