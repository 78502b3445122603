"""The document knowledge base as its own FastAPI application, mounted at `/kb` by each host (its `/health`,
`/docs` and `/openapi.json` then live at `/kb/health`, `/kb/docs`…, apart from the memory API's).

The API key is checked by the host application's middleware (one check for every route of the process);
`open_paths` tells it which of these paths need none: health, and the OpenAPI pages (they show no data). The
caller's role and scope are checked here, by `authorize_documents` (its role table is `documents.api.roles`,
docs/keys.md).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from zengram import __version__
from zengram.documents.api.roles import KB_ROUTE_ROLES
from zengram.documents.api.routes import ROUTERS
from zengram.kernel.errors import ZengramError
from zengram.kernel.lazy import Lazy as Lazy  # kb.Lazy: what create_kb_app takes
from zengram.kernel.validation import describe_validation_errors
from zengram.web.access import RouteRoles, authorize_documents
from zengram.web.errors import status_of

if TYPE_CHECKING:
    from zengram.documents.wiring import DocumentsContainer

logger = logging.getLogger(__name__)
BASE_PATH = "/kb"


def open_paths(base_path: str = BASE_PATH) -> frozenset[str]:
    """The paths under `base_path` that need no API key."""
    pages = ("/health", "/health/", "/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json")
    return frozenset(f"{base_path}{page}" for page in pages)


def create_kb_app(documents: Lazy[DocumentsContainer]) -> FastAPI:
    """`documents` builds the `DocumentsContainer` the routes use."""
    app = FastAPI(
        title="Zengram documents (Agent Brain API)",
        version=__version__,
        description="Index folders of documents and code; query them by vector, BM25, hybrid, graph or multi "
                    "retrieval. Send the API key as `Authorization: Bearer <key>` or `x-api-key`.",
        redirect_slashes=False,
        dependencies=[Depends(_authorize)],
    )
    app.state.documents = documents
    app.state.route_roles = RouteRoles(KB_ROUTE_ROLES)
    for router in ROUTERS:
        app.include_router(router)
    _install_error_handlers(app)
    return app


def _authorize(request: Request) -> None:
    authorize_documents(request, BASE_PATH, open_paths())


def _error(status_code: int, message: str) -> JSONResponse:
    """`error` as everywhere in Zengram; `detail` too, the field Agent Brain's clients print."""
    return JSONResponse({"error": message, "detail": message}, status_code=status_code)


def _describe(errors: Sequence[Any]) -> str:
    """`field: message`. Only the first part of a location says where (body, query…): this API has a body field
    named `query`, which the shared describer would take for the location."""
    first = errors[0] if errors else {}
    location = [str(part) for part in first.get("loc", ())]
    if location[:1] and location[0] in ("body", "query", "path", "header"):
        location = location[1:]
    if not location or first.get("type") == "json_invalid":
        return describe_validation_errors(errors)
    message = str(first.get("msg", "invalid input")).removeprefix("Value error, ")
    return f"{'.'.join(location)}: {message}"


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ZengramError)
    async def domain_error(_: Request, exc: ZengramError) -> JSONResponse:
        return _error(status_of(exc), str(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(400, _describe(exc.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("unhandled error on %s %s", request.method, request.url.path)
        return _error(500, "internal server error")
