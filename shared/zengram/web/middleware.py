"""Pure ASGI middleware: request ids on every response, the API key on every route but /health, and a cap on
request bodies."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Collection, Sequence

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from zengram.kernel.errors import ZengramError
from zengram.kernel.keys import Principal, key_id_of, presented_key
from zengram.web.errors import domain_error_response, error_response

logger = logging.getLogger(__name__)
OPEN_PATHS = frozenset({"/health"})
_SAFE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
# The largest valid request is an import of 500 records of 10,000 characters and 10 KB of metadata each (~13 MB
# as JSON with every field); API Gateway stops at 10 MB anyway. Anything larger is refused before it is parsed.
MAX_BODY_BYTES = 16 * 1024 * 1024
MISSING_KEY = "missing x-api-key header (or x-mnexium-key, or Authorization: Bearer)"


class RequestIdMiddleware:
    """Echoes a caller's `x-request-id` (when it is a sane token); else API Gateway's request id (on Lambda, through
    Mangum), else a generated one. `on_request_id` hears it before anything else runs (log correlation)."""

    def __init__(self, app: ASGIApp, on_request_id: Callable[[str], None] | None = None) -> None:
        self.app = app
        self._on_request_id = on_request_id

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = Headers(scope=scope).get("x-request-id", "")
        request_id = given if _SAFE_REQUEST_ID.match(given) else _gateway_request_id(scope) or str(uuid.uuid4())
        scope.setdefault("state", {})["request_id"] = request_id
        if self._on_request_id is not None:
            self._on_request_id(request_id)

        response_started = False

        async def send_with_id(message: Message) -> None:
            nonlocal response_started
            if message["type"] == "http.response.start":
                response_started = True
                MutableHeaders(scope=message)["x-request-id"] = request_id
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            # Handled here rather than by Starlette's outermost handler so the 500 still carries the id.
            logger.exception("unhandled error on %s %s (request %s)", scope["method"], scope["path"], request_id)
            if response_started:
                raise
            await error_response(500, "internal server error")(scope, receive, send_with_id)


def _gateway_request_id(scope: Scope) -> str | None:
    """API Gateway's id of this request, when Mangum passed its event along (`aws.event`)."""
    event = scope.get("aws.event")
    context = event.get("requestContext") if isinstance(event, dict) else None
    request_id = context.get("requestId") if isinstance(context, dict) else None
    return request_id if isinstance(request_id, str) and _SAFE_REQUEST_ID.match(request_id) else None


# The caller a host already verified before the request reached the app (the API Gateway authorizer), or None.
VerifiedCaller = Callable[[Scope], Principal | None]


class ApiKeyMiddleware:
    """Refuses any request without a valid key (`x-api-key`, `Authorization: Bearer` or `x-mnexium-key`) before
    routing or body parsing, and leaves the caller's `Principal` in the request state for the routes
    (`zengram.web.access`); `open_paths` need none. A caller `verified_caller` names (on AWS: the authorizer's
    verdict) is not checked again. The key is never logged."""

    def __init__(self, app: ASGIApp, authenticate: Callable[[str], Principal | None],
                 open_paths: Collection[str] = OPEN_PATHS, open_prefixes: Sequence[str] = (),
                 verified_caller: VerifiedCaller | None = None) -> None:
        self.app = app
        self._authenticate = authenticate
        self._open_paths = frozenset(open_paths)
        self._open_prefixes = tuple(open_prefixes)
        self._verified_caller = verified_caller

    def is_open(self, path: str) -> bool:
        """`open_paths`, and paths under an open prefix (static files) that do not climb out of it with `..`."""
        if path in self._open_paths:
            return True
        return ".." not in path.split("/") and any(
            path == prefix or path.startswith(prefix + "/") for prefix in self._open_prefixes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.is_open(scope["path"]):
            await self.app(scope, receive, send)
            return
        # A scoped key is one store read: off the event loop. Any other key can only be the bootstrap key, compared
        # here (held in memory by the embedded host; a Lambda instance serves one request at a time anyway): a
        # thread hop there and back cost more than the compare (#18).
        principal = self._verified_caller(scope) if self._verified_caller else None
        if principal is None:
            given = presented_key(Headers(scope=scope))
            if not given:
                await error_response(401, MISSING_KEY)(scope, receive, send)
                return
            try:
                principal = (await run_in_threadpool(self._authenticate, given) if key_id_of(given) is not None
                             else self._authenticate(given))
            except ZengramError as error:  # e.g. no key configured: say so rather than fail with a 500
                await domain_error_response(error)(scope, receive, send)
                return
        if principal is None:
            await error_response(401, "invalid API key")(scope, receive, send)
            return
        scope.setdefault("state", {})["principal"] = principal
        await self.app(scope, receive, send)


class BodySizeLimitMiddleware:
    """Refuses a body over `max_bytes` with a 413, so an oversized body is never held whole or parsed: at once
    when `content-length` says so; a chunked upload (no length) is read up to the cap, then replayed."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        declared = headers.get("content-length", "")
        if declared.isdigit():
            if int(declared) > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
            await self.app(scope, receive, send)  # the server holds the body to its declared length
            return
        if "chunked" not in headers.get("transfer-encoding", "").lower():
            await self.app(scope, receive, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        await self.app(scope, replay_body(bytes(body), receive), send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        await error_response(413, f"body: larger than {self.max_bytes:,} bytes")(scope, receive, send)


def replay_body(body: bytes, receive: Receive) -> Receive:
    """A receive that hands over the already-read body once, then waits on the real one (disconnects)."""
    pending = True

    async def replayed() -> Message:
        nonlocal pending
        if pending:
            pending = False
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
