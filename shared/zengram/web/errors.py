"""The one error mapper: every failure leaves as `{"error": "..."}` with a documented status."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from zengram.kernel.errors import ErrorKind, RateLimited, ZengramError
from zengram.kernel.validation import describe_validation_errors

logger = logging.getLogger(__name__)

# The one table from a domain error's kind to its HTTP status.
STATUS_OF_KIND: Mapping[ErrorKind, int] = {
    ErrorKind.INVALID_INPUT: 400,
    ErrorKind.FORBIDDEN: 403,
    ErrorKind.NOT_FOUND: 404,
    ErrorKind.CONFLICT: 409,
    ErrorKind.RATE_LIMITED: 429,
    ErrorKind.INTERNAL: 500,
    ErrorKind.UPSTREAM_FAILED: 502,
    ErrorKind.UNAVAILABLE: 503,
    ErrorKind.TIMED_OUT: 504,
}


def status_of(error: ZengramError) -> int:
    return STATUS_OF_KIND[error.kind]


def domain_error_response(error: ZengramError) -> JSONResponse:
    """A domain error as it leaves the API: its kind's status, its message, its details (and Retry-After)."""
    headers = {"Retry-After": str(error.retry_after)} if isinstance(error, RateLimited) else None
    return error_response(status_of(error), str(error), headers=headers, details=error.details)


def error_response(status_code: int, message: str, headers: Mapping[str, str] | None = None,
                   details: Mapping[str, Any] | None = None) -> JSONResponse:
    """`{"error": message}`, plus any `details` fields the error carries (never replacing `error`)."""
    extra = {name: value for name, value in (details or {}).items() if name != "error"}
    return JSONResponse({"error": message, **extra}, status_code=status_code, headers=headers)


def allowed_methods(request: Request) -> list[str]:
    """Every method the API serves at this request's path, as a 405's `Allow` header must list them: those of the
    OpenAPI path it falls under. A path of its own (`/memory/search`) wins over a template that would also match
    it (`/memory/{memory_id}`)."""
    path = request.scope["path"]
    paths: dict[str, dict[str, Any]] = request.app.openapi()["paths"]
    matching = [template for template in paths if _template_pattern(template).fullmatch(path)]
    if not matching:
        return []
    template = path if path in matching else matching[0]
    return sorted(method.upper() for method in paths[template])


@functools.cache
def _template_pattern(template: str) -> re.Pattern[str]:
    """`/memory/{memory_id}` as a regular expression: each parameter is one path segment."""
    return re.compile(re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template)))


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ZengramError)
    async def domain_error(_: Request, exc: ZengramError) -> JSONResponse:
        return domain_error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(400, describe_validation_errors(exc.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        headers = dict(exc.headers or {})
        allowed = allowed_methods(request) if exc.status_code == 405 else []
        if allowed:  # Starlette lists only the first matching route's methods
            headers["Allow"] = ", ".join(allowed)
        return error_response(exc.status_code, str(exc.detail), headers=headers)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("unhandled error on %s %s", request.method, request.url.path)
        return error_response(500, "internal server error")
