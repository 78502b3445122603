"""Acceptance on the AWS host: every command of the unchanged agent-brain-cli 10.7.0 (tests/clients/
agent_brain_commands.py) against the documents Lambda function (its handler, through Mangum) behind a small HTTP
bridge that turns each request into the API Gateway event Lambda would get; DynamoDB, S3, Step Functions,
EventBridge and SQS on moto, the indexing state machine interpreted by moto (test_documents_function.py).

The folder is `s3://<bucket>/handbook`: the CLI resolves what it is given as a local path (so a local mirror of that
name must exist for its existence check) and the server reads the resulting `<cwd>/s3:/bucket/prefix` as the S3
folder. A watched folder's changes arrive as the bucket's S3 events, through the template's rule and the watch
queue, drained into the watch function (test_documents_watch_function.py)."""

from __future__ import annotations

import asyncio
import shutil
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.clients.agent_brain_commands import (
    AGENT_BRAIN,
    Host,
    assert_every_command_ran,
    environment_for,
    exercise_other_commands,
    exercise_server_commands,
    http_api,
)
from tests.clients.test_agent_brain_cli import SAMPLE
from tests.functions.conftest import SAMPLE_KEY
from tests.functions.invoke import FakeLambdaContext, load_function_module
from tests.functions.test_documents_function import BUCKET, aws
from tests.functions.test_documents_watch_function import watch

__all__ = ["aws", "watch"]  # fixtures of the documents function's tests

pytestmark = pytest.mark.skipif(not AGENT_BRAIN.exists(), reason="agent-brain CLI missing: `make install` puts it "
                                                                 "in .venv-agent-brain")


class LambdaBridge(BaseHTTPRequestHandler):
    """An HTTP request in, the API Gateway HTTP API (payload 2.0) event the documents function gets, its answer
    out: what `sam local start-api` does, in process (so moto serves the function's AWS calls)."""

    def do_GET(self) -> None:
        self._call()

    def do_POST(self) -> None:
        self._call()

    def do_DELETE(self) -> None:
        self._call()

    def log_message(self, *_: Any) -> None:  # quiet
        return

    def _call(self) -> None:
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length).decode() if length else None
        request_id = uuid.uuid4().hex
        event = {"version": "2.0", "routeKey": "ANY /kb/{proxy+}", "rawPath": path, "rawQueryString": query,
                 "headers": {name.lower(): value for name, value in self.headers.items()},
                 "requestContext": {"accountId": "123456789012", "apiId": "local", "domainName": "127.0.0.1",
                                    "domainPrefix": "127", "http": {"method": self.command, "path": path,
                                                                    "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1",
                                                                    "userAgent": self.headers.get("user-agent", "")},
                                    "requestId": request_id, "routeKey": "ANY /kb/{proxy+}", "stage": "$default",
                                    "time": "07/Dec/2026:12:00:00 +0000", "timeEpoch": 1796644800000},
                 "pathParameters": {"proxy": path.removeprefix("/kb/")}, "isBase64Encoded": False, "body": body}
        response = load_function_module("documents").handler(event, FakeLambdaContext(aws_request_id=request_id))
        payload = response.get("body") or ""
        self.send_response(response["statusCode"])
        for name, value in (response.get("headers") or {}).items():
            if name.lower() not in ("content-length", "transfer-encoding"):
                self.send_header(name, value)
        self.send_header("content-length", str(len(payload.encode())))
        self.end_headers()
        self.wfile.write(payload.encode())


@pytest.fixture
def bridge() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), LambdaBridge)  # one request at a time, as one execution environment

    def serve() -> None:
        asyncio.set_event_loop(asyncio.new_event_loop())  # Mangum runs the app on the thread's loop
        server.serve_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/kb"
    finally:
        server.shutdown()
        server.server_close()


def test_every_command_against_the_aws_host(aws: tuple[Any, list[str]], watch: Any, bridge: str,
                                            tmp_path: Path) -> None:
    s3, _steps = aws
    root = tmp_path / "project"
    mirror = root / "s3:" / BUCKET / "handbook"  # the local copy the CLI's existence check wants
    shutil.copytree(SAMPLE, mirror)
    environment = {**environment_for(root), "AGENT_BRAIN_URL": bridge, "API_KEY": SAMPLE_KEY}

    def change(relative: str, text: str | None) -> None:
        if text is None:
            s3.delete_object(Bucket=BUCKET, Key=f"handbook/{relative}")
        else:
            s3.put_object(Bucket=BUCKET, Key=f"handbook/{relative}", Body=text.encode())

    host = Host("aws", root, environment, f"s3://{BUCKET}/handbook", change, http_api(bridge, SAMPLE_KEY),
                delivered=watch)
    exercise_server_commands(host)
    exercise_other_commands(host, tmp_path / "elsewhere")
    assert_every_command_ran(host)
