"""Bodies larger than any valid request are refused with 413 before they are parsed or stored."""

from __future__ import annotations

from collections.abc import Iterator

from fastapi.testclient import TestClient
from zengram.web.middleware import MAX_BODY_BYTES

from tests.api.helpers import assert_error, memory

OVERSIZED = b'{"type": "event", "content": "' + b"x" * MAX_BODY_BYTES + b'", "source_agent": "a"}'


def _chunks() -> Iterator[bytes]:
    """The same body sent chunked, so no content-length tells the size up front."""
    for start in range(0, len(OVERSIZED), 1 << 20):
        yield OVERSIZED[start:start + (1 << 20)]


def test_a_declared_oversized_body_is_refused(shared_client: TestClient) -> None:
    before = shared_client.get("/stats").json()["total_memories"]

    response = shared_client.post("/memory", content=OVERSIZED, headers={"content-type": "application/json"})

    message = assert_error(response, 413)
    assert message.startswith("body: larger than")
    assert shared_client.get("/stats").json()["total_memories"] == before


def test_a_chunked_oversized_body_is_refused(shared_client: TestClient) -> None:
    before = shared_client.get("/stats").json()["total_memories"]

    response = shared_client.post("/export/import", content=_chunks(), headers={"content-type": "application/json"})

    message = assert_error(response, 413)
    assert message.startswith("body: larger than")
    assert shared_client.get("/stats").json()["total_memories"] == before


def test_the_key_is_checked_before_the_size(shared_client: TestClient) -> None:
    anonymous = TestClient(shared_client.app)

    response = anonymous.post("/memory", content=OVERSIZED, headers={"content-type": "application/json"})

    assert_error(response, 401)


def test_a_body_under_the_cap_is_handled_as_usual(shared_client: TestClient) -> None:
    response = shared_client.post("/memory", json=memory("Acme's fiscal year starts in April"))

    assert response.status_code == 201, response.text


def test_a_chunked_body_under_the_cap_is_replayed_whole(shared_client: TestClient) -> None:
    body = b'{"type": "event", "content": "Acme moved its standup to 9:30", "source_agent": "a"}'

    response = shared_client.post("/memory", content=iter([body[:20], body[20:]]),
                                  headers={"content-type": "application/json"})

    assert response.status_code == 201, response.text
    assert shared_client.get(f"/memory/{response.json()['id']}").json()["content"] == "Acme moved its standup to 9:30"
