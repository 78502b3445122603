"""A JSON body is read as JSON whatever content type it came with (issue 37 §5.8: `curl -d '{...}'` sends
form-urlencoded, and a body without a content type got "a JSON object is required")."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from tests.api.helpers import assert_error, get

BODY = json.dumps({"type": "event", "content": "Deployed the billing service", "source_agent": "curl"}).encode()


@pytest.mark.parametrize("content_type", [None, "application/x-www-form-urlencoded", "text/plain; charset=utf-8"])
def test_a_json_object_is_read_as_json_whatever_its_content_type(client: TestClient, content_type: str | None) -> None:
    headers = {} if content_type is None else {"content-type": content_type}
    response = client.post("/memory", content=BODY, headers=headers)
    assert response.status_code == 201, response.text
    assert get(client, response.json()["id"])["content"] == "Deployed the billing service"


def test_the_chat_layer_reads_it_too(client: TestClient) -> None:
    response = client.post("/api/v1/memories", content=b'{"subject_id": "alice", "text": "Alice likes tea"}',
                           headers={"content-type": "application/x-www-form-urlencoded"})
    assert response.status_code == 201, response.text


def test_a_body_that_is_not_json_is_still_refused_naming_the_body(client: TestClient) -> None:
    response = client.post("/memory", content=b"type=event&content=hello",
                           headers={"content-type": "application/x-www-form-urlencoded"})
    assert assert_error(response, 400).startswith("body:")


def test_the_nesting_limit_holds_for_a_loosely_typed_body(client: TestClient) -> None:
    deep = {"type": "event", "content": "x", "source_agent": "curl", "metadata": {}}
    cursor = deep["metadata"]
    for _ in range(40):
        cursor["a"] = {}
        cursor = cursor["a"]
    response = client.post("/memory", content=json.dumps(deep).encode(), headers={"content-type": "text/plain"})
    assert "JSON may nest at most" in assert_error(response, 400)
