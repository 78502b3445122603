"""Routers included on the first request under their paths (zengram/web/lazy_routes.py), and the chat data group's
map of path segments to routers that the chat_data function builds its routes from (#38 item 4)."""

from __future__ import annotations

import re

from fastapi import APIRouter, FastAPI
from fastapi.testclient import TestClient
from starlette.routing import BaseRoute, Match
from zengram.chat.api.groups import DATA_ROUTERS, DATA_SEGMENTS, data_router, data_routers
from zengram.web.lazy_routes import LazyRouters, include_every_router


def routes_of(router: APIRouter) -> list[BaseRoute]:
    """The router's routes, their paths with its prefix (each data router declares /api/v1 itself)."""
    routes = list(router.routes)
    assert routes and all(str(getattr(route, "path", "")).startswith("/api/v1/") for route in routes)
    return routes


def sample_path(template: str) -> str:
    return re.sub(r"\{[^}]+\}", "x1", template)


def test_the_data_routers_by_name_are_the_groups() -> None:
    assert [data_router(name) for name in DATA_ROUTERS] == data_routers()


def test_every_data_route_is_under_a_segment_that_names_its_router() -> None:
    for name in DATA_ROUTERS:
        for route in routes_of(data_router(name)):
            segment = str(getattr(route, "path", "")).removeprefix("/api/v1/").split("/")[0]
            assert name in DATA_SEGMENTS.get(segment, ()), f"{getattr(route, 'path', '')} of {name}"
    assert {name for names in DATA_SEGMENTS.values() for name in names} == set(DATA_ROUTERS)


def test_no_path_is_matched_by_routes_of_two_data_routers() -> None:
    """So the order the routers are included in, on demand, changes no answer (not even a 405)."""
    routes = {name: routes_of(data_router(name)) for name in DATA_ROUTERS}
    for name, own in routes.items():
        for route in own:
            methods = getattr(route, "methods", None) or {"GET"}
            scope = {"type": "http", "path": sample_path(str(getattr(route, "path", ""))), "method": min(methods)}
            others = [(other, str(getattr(candidate, "path", ""))) for other, theirs in routes.items()
                      if other != name for candidate in theirs if candidate.matches(scope)[0] != Match.NONE]
            assert others == [], f"{scope['path']} of {name} is also matched by {others}"


def recording_app() -> tuple[FastAPI, list[str]]:
    loaded: list[str] = []

    def load(name: str) -> APIRouter:
        loaded.append(name)
        router = APIRouter(prefix="/api/v1")
        router.add_api_route(f"/{name}", lambda: {"router": name}, methods=["GET"])
        return router

    routers = LazyRouters("/api/v1", {"pets": ("pets",), "toys": ("toys", "pets")}, load)
    return routers.install(FastAPI()), loaded


def test_a_request_includes_only_the_routers_of_its_first_segment_once() -> None:
    app, loaded = recording_app()
    client = TestClient(app)
    assert client.get("/api/v1/cars").status_code == 404
    assert client.get("/elsewhere/pets").status_code == 404
    assert loaded == []
    assert client.get("/api/v1/pets").json() == {"router": "pets"}
    assert client.get("/api/v1/pets").json() == {"router": "pets"}
    assert loaded == ["pets"]
    assert client.get("/api/v1/toys").json() == {"router": "toys"}
    assert loaded == ["pets", "toys"]
    assert app.state.lazy_routers.included == {"pets", "toys"}


def test_the_openapi_document_and_priming_include_every_router() -> None:
    app, loaded = recording_app()
    assert set(app.openapi()["paths"]) == {"/api/v1/pets", "/api/v1/toys"}
    assert sorted(loaded) == ["pets", "toys"]
    primed, loaded = recording_app()
    include_every_router(primed)
    include_every_router(FastAPI())  # an app without lazy routers: nothing to do
    assert sorted(loaded) == ["pets", "toys"]


def test_a_mounted_app_looks_its_segment_up_under_its_root_path() -> None:
    app, loaded = recording_app()
    outer = FastAPI()
    outer.mount("/stage", app)
    assert TestClient(outer).get("/stage/api/v1/toys").json() == {"router": "toys"}
    assert loaded == ["toys", "pets"]
