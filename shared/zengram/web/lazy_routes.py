"""Routers a Lambda function includes when a request under their path first arrives, rather than at init.

FastAPI does most of a route's work when the route is declared: it analyses the endpoint's parameters and builds
the pydantic schemas of its body and response models. A function that serves many routers (the chat layer's data:
seven routers, ~50 routes) would spend most of its init on routes its first request does not reach. Such a function
names, for each first path segment under its prefix, the routers that serve paths under it; a request imports and
includes those (once), before routing. Building the OpenAPI document, or priming the init (SnapStart), includes
them all. Routers of different segments serve disjoint paths, so the order they are included in changes no match.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fastapi import APIRouter, FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send


class LazyRouters:
    """`segments`: for each first path segment under `prefix`, the names of the routers serving paths under it;
    `load`: a router by name (importing its module)."""

    def __init__(self, prefix: str, segments: Mapping[str, Sequence[str]], load: Callable[[str], APIRouter]) -> None:
        self.prefix = prefix.rstrip("/")
        self.segments = segments
        self._load = load
        self._app: FastAPI | None = None
        self._included: set[str] = set()
        self._lock = threading.Lock()

    @property
    def included(self) -> frozenset[str]:
        return frozenset(self._included)

    def install(self, app: FastAPI) -> FastAPI:
        """`app` with these routers included on demand (and all of them before its OpenAPI document is built)."""
        self._app = app
        app.state.lazy_routers = self
        app.add_middleware(LazyRoutersMiddleware, routers=self)
        build_document = app.openapi

        def document() -> dict[str, Any]:
            self.include_all()
            return build_document()

        app.openapi = document  # type: ignore[method-assign]
        return app

    def include_for(self, path: str) -> None:
        """Includes the routers of `path`'s first segment under the prefix, if any are not yet."""
        if not path.startswith(f"{self.prefix}/"):
            return
        segment = path[len(self.prefix) + 1:].split("/", 1)[0]
        for name in self.segments.get(segment, ()):
            if name not in self._included:
                self._include(name)

    def include_all(self) -> None:
        for names in self.segments.values():
            for name in names:
                if name not in self._included:
                    self._include(name)

    def _include(self, name: str) -> None:
        if self._app is None:
            raise RuntimeError("LazyRouters.install(app) first")
        with self._lock:
            if name not in self._included:
                self._app.include_router(self._load(name))
                self._included.add(name)


def include_every_router(app: FastAPI) -> None:
    """Includes whatever `app` would include on demand (priming an init before its snapshot)."""
    routers = getattr(app.state, "lazy_routers", None)
    if isinstance(routers, LazyRouters):
        routers.include_all()


class LazyRoutersMiddleware:
    def __init__(self, app: ASGIApp, routers: LazyRouters) -> None:
        self.app = app
        self._routers = routers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self._routers.include_for(_route_path(scope))
        await self.app(scope, receive, send)


def _route_path(scope: Scope) -> str:
    """The path the router matches: without the app's root path, when it is mounted under one (as Starlette does)."""
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    if root and path.startswith(root) and path[len(root):len(root) + 1] == "/":
        return path[len(root):]
    return path
