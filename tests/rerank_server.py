"""A small re-ranker on the loopback, for driving the rerank hook over real HTTP.

POST /rerank speaks the Cohere shape (`{query, documents}` → `{results: [{index, relevance_score}]}`), POST /tei
the text-embeddings-inference shape (`{query, texts}` → `[{index, score}]`). It scores each document by the
share of the query's words it contains — a stand-in for a cross-encoder that reads query and document together.
Every request body is recorded (`requests`), with its Authorization header (`authorizations`).

    server.fail_with = 503        # answer every request with this status
    server.delay = 1.0            # answer late (past the client's timeout)
    server.raw_answer = {"x": 1}  # answer this JSON instead of scores
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_WORD = re.compile(r"\w+")


def word_overlap(query: str, document: str) -> float:
    """The share of the query's distinct words that the document contains, in [0, 1]."""
    wanted = {word.casefold() for word in _WORD.findall(query)}
    present = {word.casefold() for word in _WORD.findall(document)}
    return len(wanted & present) / len(wanted) if wanted else 0.0


class RerankServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str] = []
        self.fail_with: int | None = None
        self.delay = 0.0
        self.raw_answer: object | None = None
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/rerank"

    @property
    def tei_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/tei"

    def start(self) -> RerankServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, object]:
        if self.fail_with is not None:
            return self.fail_with, {"error": "scripted failure"}
        if self.raw_answer is not None:
            return 200, self.raw_answer
        query = str(body["query"])
        if path == "/tei":
            return 200, [{"index": i, "score": word_overlap(query, text)} for i, text in enumerate(body["texts"])]
        scored = [{"index": i, "relevance_score": word_overlap(query, text)}
                  for i, text in enumerate(body["documents"])]
        return 200, {"results": sorted(scored, key=lambda row: -float(row["relevance_score"]))}


def _handler_for(server: RerankServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
            server.requests.append(body)
            server.authorizations.append(self.headers.get("authorization", ""))
            if server.delay:
                time.sleep(server.delay)
            status, answer = server.answer(self.path, body)
            payload = json.dumps(answer).encode()
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                pass

        def log_message(self, *args: Any) -> None:
            pass

    return Handler
