"""Where the API key middleware checks a key (#18): the bootstrap key on the event loop (a compare in memory; the
thread hop there and back cost more), a scoped key (`zgk_…`, one store read) on a worker thread. Either way the
caller is the one `authenticate` names, and a wrong key is refused."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from starlette.types import Message, Receive, Scope, Send
from zengram.kernel.keys import BOOTSTRAP_PRINCIPAL, Principal
from zengram.web.middleware import ApiKeyMiddleware

SCOPED_KEY = "zgk_" + "0" * 32 + "_" + "a" * 43
BOOTSTRAP_KEY = "the-bootstrap-key"


class Recorder:
    def __init__(self) -> None:
        self.threads: list[int] = []

    def authenticate(self, presented: str) -> Principal | None:
        self.threads.append(threading.get_ident())
        return BOOTSTRAP_PRINCIPAL if presented in (BOOTSTRAP_KEY, SCOPED_KEY) else None


async def call(middleware: ApiKeyMiddleware, key: str) -> tuple[int, int, Any]:
    """Status, the event loop's thread, and the principal the app saw."""
    seen: dict[str, Any] = {}

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen["principal"] = scope["state"]["principal"]
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    middleware.app = app
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/memory/query", "headers": [(b"x-api-key", key.encode())]}
    await middleware(scope, receive, send)
    return sent[0]["status"], threading.get_ident(), seen.get("principal")


@pytest.mark.parametrize(("key", "on_the_loop"), [(BOOTSTRAP_KEY, True), (SCOPED_KEY, False)])
def test_the_bootstrap_key_is_checked_on_the_loop_a_scoped_key_on_a_worker(key: str, on_the_loop: bool) -> None:
    recorder = Recorder()
    middleware = ApiKeyMiddleware(app=None, authenticate=recorder.authenticate)  # type: ignore[arg-type]

    status, loop_thread, principal = asyncio.run(call(middleware, key))

    assert status == 200 and principal is BOOTSTRAP_PRINCIPAL
    assert (recorder.threads == [loop_thread]) is on_the_loop


@pytest.mark.parametrize("key", ["not-the-key", "zgk_" + "1" * 32 + "_" + "b" * 43])
def test_a_wrong_key_is_refused_wherever_it_is_checked(key: str) -> None:
    recorder = Recorder()
    middleware = ApiKeyMiddleware(app=None, authenticate=recorder.authenticate)  # type: ignore[arg-type]

    status, _, principal = asyncio.run(call(middleware, key))

    assert status == 401 and principal is None and len(recorder.threads) == 1
