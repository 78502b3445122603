"""A scripted OpenAI-compatible chat-completions server on the loopback, for driving the real openai SDK.

Each test queues the assistant replies it wants (`server.script(...)`); every request body is recorded
(`server.requests`) with its Authorization header (`server.authorizations`). With an empty queue the server
answers 500, so a test that asks the model more often than it scripted fails loudly.

    server.script({"summary": "…"}, "not json")   # a dict/list is JSON-dumped, a str is sent as is
    server.script(HttpFailure(401))                  # or answer one request with an HTTP error
    server.script(Delayed({"summary": "…"}, 1.0))    # or answer late (for client timeouts)
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic import SecretStr
from zengram.settings import Settings

CHAT_COMPLETIONS_PATH = "/v1/chat/completions"
TEST_LLM_KEY = "sk-test-llm-not-a-real-key"
TEST_LLM_MODEL = "test-chat-model"


@dataclass(frozen=True)
class HttpFailure:
    """A scripted reply that is an HTTP error instead of an assistant message."""

    status: int
    message: str = "scripted failure"


@dataclass(frozen=True)
class Delayed:
    """A scripted reply sent only after `seconds` (longer than the client's timeout, it is never read)."""

    reply: str | dict[str, Any] | list[Any] | HttpFailure
    seconds: float


Reply = str | dict[str, Any] | list[Any] | HttpFailure | Delayed


class ScriptedLLMServer:
    """POST /v1/chat/completions answered from a queue of scripted assistant messages."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._replies: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> ScriptedLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def script(self, *replies: Reply) -> None:
        """Queues replies, answered one per request in order."""
        with self._lock:
            self._replies.extend(replies)

    def reset(self) -> None:
        with self._lock:
            self._replies.clear()
            self.requests.clear()
            self.authorizations.clear()

    @property
    def pending(self) -> int:
        """Scripted replies not asked for yet."""
        with self._lock:
            return len(self._replies)

    def _answer(self, body: dict[str, Any], authorization: str) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(body)
            self.authorizations.append(authorization)
            reply = self._replies.popleft() if self._replies else HttpFailure(500, "no scripted reply left")
        if isinstance(reply, Delayed):
            time.sleep(reply.seconds)  # on this request's own server thread
            reply = reply.reply
        if isinstance(reply, HttpFailure):
            return reply.status, {"error": {"message": reply.message, "type": "scripted", "code": None}}
        content = reply if isinstance(reply, str) else json.dumps(reply)
        return 200, _completion(body.get("model", ""), content)


def _completion(model: str, content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1_767_225_600,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop",
            "logprobs": None,
        }],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _handler_for(server: ScriptedLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
            if self.path != CHAT_COMPLETIONS_PATH:
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            self._send(*server._answer(body, self.headers.get("Authorization", "")))

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            raw = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting (a timeout test)
                pass

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

    return Handler


def settings_with_llm(settings: Settings, server: ScriptedLLMServer) -> Settings:
    """A copy of `settings` whose language model is the scripted server (no SDK retries, short timeout)."""
    return settings.model_copy(update={
        "llm_base_url": server.base_url,
        "llm_api_key": SecretStr(TEST_LLM_KEY),
        "llm_model": TEST_LLM_MODEL,
        "llm_timeout": 10.0,
        "llm_max_retries": 0,
    })
