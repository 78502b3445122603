"""The SearchIndex custom resource (functions/bootstrap): CloudFormation's Create/Update/Delete events, answered by a
PUT to the event's ResponseURL (a local server here) as CloudFormation expects, whatever happens."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from zengram.adapters.factories import build_embedder, build_search_index
from zengram.serverless.jobs import index_bootstrap_handler
from zengram.settings import Settings

from tests.functions.invoke import FakeLambdaContext, load_event

TITAN = "amazon.titan-embed-text-v2:0"


@dataclass
class LongContext(FakeLambdaContext):
    """A custom resource invocation with its 300 s timeout ahead of it."""

    def get_remaining_time_in_millis(self) -> int:
        return 290_000


class ResponseRecorder:
    """Stands in for the pre-signed S3 URL CloudFormation waits on."""

    def __init__(self) -> None:
        self.answers: list[dict[str, Any]] = []
        self.content_types: list[str | None] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_PUT(self) -> None:
                recorder.content_types.append(self.headers.get("Content-Type"))
                recorder.answers.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                """Quiet."""

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.server_port}/signed-response"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def cloudformation() -> Iterator[ResponseRecorder]:
    recorder = ResponseRecorder()
    yield recorder
    recorder.close()


@pytest.fixture
def bedrock_environment(lambda_environment: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """What template.yaml gives the bootstrap function (the index local, the embedder never called)."""
    for name, value in {"ZENGRAM_EMBEDDER": "bedrock", "ZENGRAM_BEDROCK_MODEL_ID": TITAN,
                        "ZENGRAM_EMBEDDING_DIMENSIONS": "1024", "ZENGRAM_OPENSEARCH_ALIAS": "zengram-dev-memories",
                        "POWERTOOLS_SERVICE_NAME": "zengram-bootstrap"}.items():
        monkeypatch.setenv(name, value)
    return lambda_environment


def send(cloudformation: ResponseRecorder, sample: str, context: Any = None) -> dict[str, Any]:
    event = load_event(f"bootstrap/{sample}.json", ResponseURL=cloudformation.url)
    index_bootstrap_handler()(event, context or LongContext())
    answer = cloudformation.answers[-1]
    assert {key: answer[key] for key in ("StackId", "RequestId", "LogicalResourceId")} == {
        key: event[key] for key in ("StackId", "RequestId", "LogicalResourceId")}
    assert answer["PhysicalResourceId"] == "zengram-dev-memories"
    return answer


def bound_model() -> str | None:
    index = build_search_index(Settings())
    try:
        return index.model_id
    finally:
        index.close()


def test_create_makes_the_index_for_the_configured_model(bedrock_environment: str,
                                                         cloudformation: ResponseRecorder) -> None:
    assert bound_model() is None
    answer = send(cloudformation, "create")
    assert answer["Status"] == "SUCCESS", answer["Reason"]
    assert answer["Data"] == {"Alias": "zengram-dev-memories"}
    assert bound_model() == build_embedder(Settings()).model_id
    assert cloudformation.content_types == [""]  # the URL is signed without a content type


def test_an_update_to_another_model_fails_the_deployment_and_keeps_the_index(
    bedrock_environment: str, cloudformation: ResponseRecorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    send(cloudformation, "create")
    before = bound_model()
    monkeypatch.setenv("ZENGRAM_BEDROCK_MODEL_ID", "cohere.embed-english-v3")
    answer = send(cloudformation, "update")
    assert answer["Status"] == "FAILED"
    assert answer["Reason"].startswith("EmbeddingMismatch:") and "zengram reindex" in answer["Reason"]
    assert bound_model() == before


def test_delete_leaves_the_index_alone(bedrock_environment: str, cloudformation: ResponseRecorder) -> None:
    send(cloudformation, "create")
    before = bound_model()
    assert send(cloudformation, "delete")["Status"] == "SUCCESS"
    assert bound_model() == before is not None


def test_access_not_granted_yet_is_waited_for(bedrock_environment: str, cloudformation: ResponseRecorder,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import zengram.assembly.containers  # the handler imports build_container from there when it runs

    real_build, calls, pauses = zengram.assembly.containers.build_container, [], []

    def build_once_refused(settings: Settings, **options: Any) -> Any:
        calls.append(settings)
        if len(calls) == 1:
            raise PermissionError("403 security_exception: no permissions for [indices:admin/create]")
        return real_build(settings, **options)

    monkeypatch.setattr(zengram.assembly.containers, "build_container", build_once_refused)
    monkeypatch.setattr("time.sleep", pauses.append)
    answer = send(cloudformation, "create")
    assert answer["Status"] == "SUCCESS" and len(calls) == 2 and pauses == [10]


def test_a_failure_that_outlasts_the_time_left_is_reported(bedrock_environment: str, cloudformation: ResponseRecorder,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import zengram.assembly.containers

    def refused(settings: Settings, **options: Any) -> Any:
        raise ConnectionError("the domain does not answer")

    monkeypatch.setattr(zengram.assembly.containers, "build_container", refused)
    answer = send(cloudformation, "create", FakeLambdaContext())  # 29 s left: less than the 30 s reserve
    assert answer["Status"] == "FAILED" and answer["Reason"] == "ConnectionError: the domain does not answer"
