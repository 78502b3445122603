"""The app factory every host uses: the embedded server with all routers, each Lambda with one."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from typing import Any

from fastapi import APIRouter, Depends, FastAPI

from zengram import __version__
from zengram.kernel.lazy import Lazy
from zengram.web.access import RouteRoles, authenticator, authorize
from zengram.web.errors import install_error_handlers
from zengram.web.json_guard import JsonDepthMiddleware
from zengram.web.middleware import (
    OPEN_PATHS,
    ApiKeyMiddleware,
    BodySizeLimitMiddleware,
    RequestIdMiddleware,
    VerifiedCaller,
)
from zengram.web.rate_limits import enforce_rate_limit
from zengram.web.schemas import ERROR_BODY_SCHEMA, ErrorBody

API_KEY_SCHEME = "ApiKey"
REF_TEMPLATE = "#/components/schemas/{model}"


def create_app(
    routers: Sequence[APIRouter],
    provider: Lazy[Any],
    expected_key: Callable[[], str],
    *,
    verified_caller: VerifiedCaller | None = None,
    open_paths: Collection[str] = OPEN_PATHS,
    open_prefixes: Sequence[str] = (),
    on_request_id: Callable[[str], None] | None = None,
    route_roles: RouteRoles | None = None,
    **fastapi_options: Any,
) -> FastAPI:
    """`verified_caller`: how the host names a caller it verified before the app (the AWS authorizer); others
    are verified here, with `expected_key` (the bootstrap key) and the container's key store. `open_paths` are
    served without a key, and so is everything under `open_prefixes` (the embedded host's static dashboard).
    `on_request_id` hears each request's id as soon as it is decided (the Lambda host makes it the log lines'
    correlation id). `route_roles`: the role each route needs (`zengram.assembly.roles`; without it, every route
    needs admin)."""
    app = FastAPI(
        title="Zengram",
        version=__version__,
        description="Shared long-term memory for AI agents (Zengram v4 API).",
        docs_url=None,
        redoc_url=None,
        # Every route; /health is exempt inside. A caller without the route's role is refused before it is counted.
        dependencies=[Depends(authorize), Depends(enforce_rate_limit)],
        **fastapi_options,
    )
    app.state.provider = provider
    app.state.route_roles = route_roles
    for router in routers:
        app.include_router(router)
    install_error_handlers(app)
    _document_the_api_key(app)
    _document_the_error_body(app)
    app.add_middleware(JsonDepthMiddleware)  # inside the size limit: it reads the (capped) body whole
    app.add_middleware(BodySizeLimitMiddleware)  # inside the key check: a stranger learns nothing but 401
    # app.state.provider at call time, like every dependency: a test may hand the app a fresh container.
    authenticate = authenticator(expected_key, lambda presented: app.state.provider.get().keys.authenticate(presented))
    app.add_middleware(ApiKeyMiddleware, authenticate=authenticate, open_paths=open_paths,
                       open_prefixes=open_prefixes, verified_caller=verified_caller)
    app.add_middleware(RequestIdMiddleware, on_request_id=on_request_id)  # added last = outermost: a 401 has it too
    return app


def _document_the_error_body(app: FastAPI) -> None:
    """Routes name their error responses' body by reference (`documented_error`): the document lists it here,
    when a route refers to it."""
    build_document = app.openapi

    def document() -> dict[str, Any]:
        schema = build_document()
        if ERROR_BODY_SCHEMA not in json.dumps(schema.get("paths", {})):
            return schema
        schemas = schema.setdefault("components", {}).setdefault("schemas", {})
        if ErrorBody.__name__ not in schemas:
            schemas[ErrorBody.__name__] = ErrorBody.model_json_schema(ref_template=REF_TEMPLATE)
            schema["components"]["schemas"] = dict(sorted(schemas.items()))  # FastAPI's order: by name
        return schema

    app.openapi = document  # type: ignore[method-assign]


def _document_the_api_key(app: FastAPI) -> None:
    """The OpenAPI document says what `ApiKeyMiddleware` enforces: every operation but the open ones needs the
    `x-api-key` header (so a generated client sends it, and a fuzzer may check that a call without it is refused)."""
    build_document = app.openapi

    def document() -> dict[str, Any]:
        schema = build_document()  # built once, then cached by FastAPI: this adds to it once
        if "securitySchemes" not in schema.setdefault("components", {}):
            schema["components"]["securitySchemes"] = {
                API_KEY_SCHEME: {"type": "apiKey", "in": "header", "name": "x-api-key"}}
            for path, operations in schema["paths"].items():
                for operation in operations.values():
                    operation["security"] = [] if path in OPEN_PATHS else [{API_KEY_SCHEME: []}]
        return schema

    app.openapi = document  # type: ignore[method-assign]
