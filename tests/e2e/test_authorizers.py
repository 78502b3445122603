"""Keys at the edge: every route family refuses a request without its key (401) or with a wrong one (403) before
any function runs. Through the emulator the answers are API Gateway's own (`{"message": …}`, not a function's
`{"error": …}`); the embedded stand-in answers from its middleware (401, `{"error": …}`) for both."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.xdist_group("e2e")  # one worker, one cloud (conftest.py)

# (method, path, body, the header its clients send the key in) — one route of each function behind an authorizer
ROUTES = [
    ("POST", "/memory", {"type": "event", "content": "x"}, "x-api-key"),
    ("GET", "/memory/search?q=x", None, "x-api-key"),
    ("GET", "/briefing?since=2000-01-01T00:00:00Z", None, "x-api-key"),
    ("GET", "/stats", None, "x-api-key"),
    ("GET", "/entities", None, "x-api-key"),
    ("GET", "/export", None, "x-api-key"),
    ("GET", "/clients", None, "x-api-key"),
    ("GET", "/admin/keys", None, "x-api-key"),
    ("POST", "/reflect", {"topic": "x"}, "x-api-key"),
    ("GET", "/consolidate/status", None, "x-api-key"),
    ("POST", "/research", {"topic": "x"}, "x-api-key"),
    ("GET", "/api/v1/memories?subject_id=alice", None, "x-mnexium-key"),
    ("POST", "/api/v1/chat/completions", {"model": "m", "messages": []}, "x-mnexium-key"),
    ("GET", "/api/v1/state/trip?subject_id=alice", None, "x-mnexium-key"),
    ("GET", "/kb/health/status", None, "authorization"),
    ("POST", "/kb/query", {"query": "x"}, "authorization"),
]


def presented(header: str, key: str) -> dict[str, str]:
    return {header: f"Bearer {key}" if header == "authorization" else key}


def send(api_url: str, method: str, path: str, body: Any, headers: dict[str, str]) -> httpx.Response:
    return httpx.request(method, f"{api_url}{path}", json=body, headers=headers, timeout=120)


@pytest.mark.parametrize(("method", "path", "body", "header"), ROUTES, ids=[f"{m} {p}" for m, p, _, _ in ROUTES])
def test_missing_and_wrong_keys_are_refused(api_url: str, at_the_edge: bool, method: str, path: str, body: Any,
                                            header: str) -> None:
    missing = send(api_url, method, path, body, {})
    wrong = send(api_url, method, path, body, presented(header, "not-the-key-0123456789"))
    assert missing.status_code == 401, missing.text
    if at_the_edge:
        assert missing.json() == {"message": "Unauthorized"}  # the gateway's answer: no function ran
        assert wrong.status_code == 403 and set(wrong.json()) == {"message"}, wrong.text
    else:
        assert wrong.status_code in (401, 403) and wrong.json()["error"], wrong.text


@pytest.mark.parametrize(("method", "path", "body", "header"), ROUTES, ids=[f"{m} {p}" for m, p, _, _ in ROUTES])
def test_the_right_key_passes(api_url: str, api_key: str, method: str, path: str, body: Any, header: str) -> None:
    """The same request with the key gets past the authorizer to the function: whatever it answers is the
    function's (a JSON body, never the gateway's 401/403)."""
    answer = send(api_url, method, path, body, presented(header, api_key))
    assert answer.status_code not in (401, 403), answer.text
    assert "message" not in answer.json() or answer.json().get("message") != "Unauthorized"


def test_the_open_routes_need_no_key(api_url: str) -> None:
    assert httpx.get(f"{api_url}/health", timeout=120).status_code == 200
    assert httpx.get(f"{api_url}/kb/health", timeout=120).status_code == 200


def test_each_authorizer_reads_its_own_header(api_url: str, api_key: str, at_the_edge: bool) -> None:
    """At the edge a route's authorizer is cached on one header: the memory API's key sent to /kb (which reads
    Authorization) or to the chat layer (x-mnexium-key) is a missing key there."""
    if not at_the_edge:
        pytest.skip("an edge behaviour: the embedded server takes any of the key headers on every route")
    assert send(api_url, "POST", "/kb/query", {"query": "x"}, {"x-api-key": api_key}).status_code == 401
    assert send(api_url, "GET", "/api/v1/memories?subject_id=a", None, {"x-api-key": api_key}).status_code == 401
