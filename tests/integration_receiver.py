"""A loopback HTTP server standing for an integration's outside end: a JSON source to pull (`GET|POST /source`), a
webhook receiver that verifies each delivery's signature the way the Mnexium SDK's `sign_webhook` computes it
(`POST /hook`), optionally failing its first `fail_times` deliveries, and a redirect (`GET /redirect?to=URL`).

    with IntegrationReceiver(secret="whsec_…") as receiver:
        receiver.source = {"plan": {"tier": "pro"}}
        receiver.fail_times = 2
        receiver.url("/hook")  # http://127.0.0.1:<port>/hook
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mnexium import Mnexium


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes
    verified: bool | None  # deliveries only: the signature matched (by the SDK's scheme and over the raw body)
    answered: int


class IntegrationReceiver:
    def __init__(self, secret: str = "") -> None:
        self.secret = secret
        self.source: Any = {}
        self.fail_times = 0
        self.received: list[Received] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> IntegrationReceiver:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def url(self, path: str) -> str:
        return f"{self.base}{path}"

    def deliveries(self) -> list[Received]:
        with self._lock:
            return [one for one in self.received if one.path == "/hook"]

    def verify(self, headers: dict[str, str], body: bytes) -> bool:
        """The SDK's own `sign_webhook` over the parsed body, and an HMAC over the raw bytes, both must match."""
        timestamp, given = headers.get("x-mnx-webhook-timestamp", ""), headers.get("x-mnx-webhook-signature", "")
        if not (timestamp and given and self.secret):
            return False
        sdk = Mnexium(api_key="verify-only", base_url="http://127.0.0.1:9/api/v1", max_retries=0)
        by_sdk = sdk.integrations.sign_webhook(json.loads(body), secret=self.secret, timestamp=timestamp).signature
        raw = hmac.new(self.secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(given, by_sdk) and hmac.compare_digest(given, raw)

    def _record(self, handler: BaseHTTPRequestHandler, body: bytes, verified: bool | None, status: int) -> None:
        with self._lock:
            parts = urlsplit(handler.path)
            self.received.append(Received(handler.command, parts.path, parts.query,
                                          {k.lower(): v for k, v in handler.headers.items()}, body, verified, status))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: object) -> None:
                return

            def _body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("content-length") or 0))

            def _answer(self, status: int, payload: Any = None, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode() if payload is not None else b""
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._serve(b"")

            def do_POST(self) -> None:
                self._serve(self._body())

            def _serve(self, body: bytes) -> None:
                parts = urlsplit(self.path)
                if parts.path == "/source":
                    receiver._record(self, body, None, 200)
                    self._answer(200, receiver.source)
                elif parts.path == "/redirect":
                    receiver._record(self, body, None, 302)
                    self._answer(302, headers={"location": parse_qs(parts.query)["to"][0]})
                elif parts.path == "/hook":
                    verified = receiver.verify({k.lower(): v for k, v in self.headers.items()}, body)
                    with receiver._lock:
                        failing = receiver.fail_times > 0
                        receiver.fail_times -= 1 if failing else 0
                    status = 503 if failing else (200 if verified else 401)
                    receiver._record(self, body, verified, status)
                    self._answer(status, {"ok": status == 200})
                else:
                    self._answer(404, {"error": "no such path"})

        return Handler
