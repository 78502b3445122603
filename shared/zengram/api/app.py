"""The app factory every host uses: the embedded server with all routers, each Lambda with one."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from fastapi import APIRouter, Depends, FastAPI

from zengram import __version__
from zengram.api.errors import install_error_handlers
from zengram.api.middleware import OPEN_PATHS, ApiKeyMiddleware, BodySizeLimitMiddleware, RequestIdMiddleware
from zengram.api.rate_limits import enforce_rate_limit
from zengram.bootstrap import ContainerProvider


def create_app(
    routers: Sequence[APIRouter],
    provider: ContainerProvider,
    expected_key: Callable[[], str],
    open_paths: Collection[str] = OPEN_PATHS,
    **fastapi_options: Any,
) -> FastAPI:
    app = FastAPI(
        title="Zengram",
        version=__version__,
        description="Shared long-term memory for AI agents (Zengram v4 API).",
        docs_url=None,
        redoc_url=None,
        dependencies=[Depends(enforce_rate_limit)],  # every route; /health is exempt inside
        **fastapi_options,
    )
    app.state.provider = provider
    for router in routers:
        app.include_router(router)
    install_error_handlers(app)
    app.add_middleware(BodySizeLimitMiddleware)  # inside the key check: a stranger learns nothing but 401
    app.add_middleware(ApiKeyMiddleware, expected_key=expected_key, open_paths=open_paths)
    app.add_middleware(RequestIdMiddleware)  # added last = outermost: even a 401 carries the id
    return app
