"""Pure ASGI middleware: request ids on every response, and the API key on every route but /health."""

from __future__ import annotations

import hmac
import logging
import re
import uuid
from collections.abc import Callable

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from zengram.api.errors import error_response
from zengram.domain.errors import ZengramError

logger = logging.getLogger(__name__)
OPEN_PATHS = frozenset({"/health"})
_SAFE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


class RequestIdMiddleware:
    """Echoes a caller's `x-request-id` (when it is a sane token) or generates one."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = Headers(scope=scope).get("x-request-id", "")
        request_id = given if _SAFE_REQUEST_ID.match(given) else str(uuid.uuid4())
        scope.setdefault("state", {})["request_id"] = request_id

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


class ApiKeyMiddleware:
    """Refuses any request without the right `x-api-key` before routing or body parsing."""

    def __init__(self, app: ASGIApp, expected_key: Callable[[], str]) -> None:
        self.app = app
        self._expected_key = expected_key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        given = Headers(scope=scope).get("x-api-key")
        if not given:
            await error_response(401, "missing x-api-key header")(scope, receive, send)
            return
        try:
            expected = self._expected_key()
        except ZengramError as error:  # e.g. no key configured: say so rather than fail with a 500
            await error_response(error.status_code, str(error))(scope, receive, send)
            return
        if not hmac.compare_digest(given.encode(), expected.encode()):
            await error_response(401, "invalid API key")(scope, receive, send)
            return
        await self.app(scope, receive, send)
