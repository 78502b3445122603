"""A scripted OpenAI-compatible chat-completions server on the loopback, for driving the real openai SDK.

Each test queues the assistant replies it wants (`server.script(...)`); every request body is recorded
(`server.requests`) with its Authorization header (`server.authorizations`). With an empty queue the server
answers 500, so a test that asks the model more often than it scripted fails loudly.

    server.script({"summary": "…"}, "not json")   # a dict/list is JSON-dumped, a str is sent as is
    server.script(HttpFailure(401))                  # or answer one request with an HTTP error
    server.script(Delayed({"summary": "…"}, 1.0))    # or answer late (for client timeouts)

Named routes stand for several providers on one server: `server.url_for("openai")` is a base URL whose requests
are answered from that route's own queue (`server.script(..., route="openai")`), so a test can tell the chat
layer's provider calls from its learning calls. `server.calls` records each request's route, body and headers.
A request with `"stream": true` is answered as OpenAI streams: `chat.completion.chunk` events, `data: [DONE]`.
`server.default(reply, route=...)` answers whatever a route's queue leaves unscripted.
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
DEFAULT_ROUTE = ""
STREAM_PIECE_WORDS = 2  # words per streamed chunk
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


@dataclass(frozen=True)
class AssistantMessage:
    """A scripted reply with tool calls (each `{"id", "name", "arguments": {...}}`), streamed as OpenAI streams
    them (the call's id and name first, then its arguments)."""

    content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None

    def message(self) -> dict[str, Any]:
        calls = [{"id": c["id"], "type": "function", "function": {"name": c["name"],
                                                                   "arguments": json.dumps(c["arguments"])}}
                 for c in self.tool_calls or []]
        return {"role": "assistant", "content": self.content, **({"tool_calls": calls} if calls else {})}


Reply = str | dict[str, Any] | list[Any] | HttpFailure | Delayed | AssistantMessage


@dataclass(frozen=True)
class Call:
    """One request as the server received it."""

    route: str
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.body.get("messages", [])
        return messages


class ScriptedLLMServer:
    """POST /v1/chat/completions (and /<route>/v1/chat/completions) answered from queues of scripted messages."""

    def __init__(self, host: str = "127.0.0.1", advertised_host: str | None = None) -> None:
        """`host` is the address it listens on (0.0.0.0 for containers to reach it), `advertised_host` the name
        its URLs give (e.g. host.containers.internal; the listening address by default)."""
        self._advertised = advertised_host or host
        self._lock = threading.Lock()
        self._queues: dict[str, deque[Reply]] = {}
        self._defaults: dict[str, Reply] = {}
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str] = []
        self.calls: list[Call] = []
        self._httpd = ThreadingHTTPServer((host, 0), _handler_for(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://{self._advertised}:{self._httpd.server_address[1]}/v1"

    def start(self) -> ScriptedLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def url_for(self, route: str) -> str:
        """The base URL of a named route (a provider of its own)."""
        return f"http://{self._advertised}:{self._httpd.server_address[1]}/{route}/v1"

    def script(self, *replies: Reply, route: str = DEFAULT_ROUTE) -> None:
        """Queues replies for a route, answered one per request in order."""
        with self._lock:
            self._queues.setdefault(route, deque()).extend(replies)

    def default(self, reply: Reply | None, route: str = DEFAULT_ROUTE) -> None:
        """The reply for a route's requests once its queue is empty (None: a 500, as without a default)."""
        with self._lock:
            if reply is None:
                self._defaults.pop(route, None)
            else:
                self._defaults[route] = reply

    def reset(self) -> None:
        with self._lock:
            self._queues.clear()
            self._defaults.clear()
            self.requests.clear()
            self.authorizations.clear()
            self.calls.clear()

    @property
    def pending(self) -> int:
        """Scripted replies not asked for yet."""
        with self._lock:
            return sum(len(queue) for queue in self._queues.values())

    def calls_to(self, route: str) -> list[Call]:
        with self._lock:
            return [call for call in self.calls if call.route == route]

    def _next(self, route: str, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.authorizations.append(headers.get("authorization", ""))
            self.calls.append(Call(route, body, headers))
            queue = self._queues.get(route)
            if queue:
                return queue.popleft()
            return self._defaults.get(route, HttpFailure(500, "no scripted reply left"))

    def _answer(self, body: dict[str, Any], authorization: str, route: str = DEFAULT_ROUTE,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
        reply = self._next(route, body, {**(headers or {}), "authorization": authorization})
        if isinstance(reply, Delayed):
            time.sleep(reply.seconds)  # on this request's own server thread
            reply = reply.reply
        if isinstance(reply, HttpFailure):
            return reply.status, {"error": {"message": reply.message, "type": "scripted", "code": None}}
        if isinstance(reply, AssistantMessage):
            return 200, _completion(body.get("model", ""), reply.message())
        content = reply if isinstance(reply, str) else json.dumps(reply)
        return 200, _completion(body.get("model", ""), {"role": "assistant", "content": content})


def _completion(model: str, message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1_767_225_600,
        "model": model,
        "choices": [{
            "index": 0,
            "message": message,
            "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            "logprobs": None,
        }],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def stream_events(model: str, content: str, *, usage: bool) -> list[dict[str, Any]]:
    """The chunks OpenAI streams for one assistant message: the role, the text a few words at a time, the finish
    reason, and (when asked) a last chunk with the usage."""
    base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 1_767_225_600, "model": model}
    words = content.split(" ")
    pieces = [" ".join(words[i:i + STREAM_PIECE_WORDS]) + (" " if i + STREAM_PIECE_WORDS < len(words) else "")
              for i in range(0, len(words), STREAM_PIECE_WORDS)]
    chunks = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
    chunks += [{**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
               for piece in pieces if piece]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    if usage:
        chunks.append({**base, "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": len(pieces),
                                                        "total_tokens": 1 + len(pieces)}})
    return chunks


def _with_tool_calls(chunks: list[dict[str, Any]], calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chunks with each tool call streamed before the finish (id and name, then the arguments)."""
    if not calls:
        return chunks
    base = {key: chunks[0][key] for key in ("id", "object", "created", "model")}
    deltas = []
    for index, call in enumerate(calls):
        opened = {"index": index, "id": call["id"], "type": "function",
                  "function": {"name": call["function"]["name"], "arguments": ""}}
        filled = {"index": index, "function": {"arguments": call["function"]["arguments"]}}
        deltas += [{**base, "choices": [{"index": 0, "delta": {"tool_calls": [delta]}, "finish_reason": None}]}
                   for delta in (opened, filled)]
    finish = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    at = next(i for i, chunk in enumerate(chunks) if chunk["choices"] and chunk["choices"][0]["finish_reason"])
    return [*chunks[:at], *deltas, finish, *chunks[at + 1:]]


def _handler_for(server: ScriptedLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
            if not self.path.endswith(CHAT_COMPLETIONS_PATH):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            route = self.path[: -len(CHAT_COMPLETIONS_PATH)].strip("/")
            headers = {name.lower(): value for name, value in self.headers.items()}
            status, payload = server._answer(body, self.headers.get("Authorization", ""), route, headers)
            if status == 200 and body.get("stream"):
                message = payload["choices"][0]["message"]
                usage = bool((body.get("stream_options") or {}).get("include_usage"))
                chunks = stream_events(body.get("model", ""), message["content"] or "", usage=usage)
                self._stream(_with_tool_calls(chunks, message.get("tool_calls") or []))
                return
            self._send(status, payload)

        def _stream(self, chunks: list[dict[str, Any]]) -> None:
            raw = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks).encode() + b"data: [DONE]\n\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

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
