"""The route map in docs/architecture.md is the one infra/scripts/route_map.py generates from the app, and what it
promises holds: a route's full path greps to the decorator that declares it (its router's prefix and the /kb mount
written literally beside it), and from there to the service method that holds its logic."""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

import pytest
from fastapi import FastAPI
from zengram.chat.api import (
    PREFIX,
    claims,
    completions,
    events,
    history,
    memories,
    profiles,
    prompts,
    records,
    state,
    unsupported,
)
from zengram.chat.api.roles import UNSUPPORTED_PATHS

from tests.support import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "infra" / "scripts"))
import route_map

API_MODULE = re.compile(r"^zengram\.\w+\.api\.")


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> FastAPI:
    return route_map.build_app(tmp_path_factory.mktemp("route-map"))


@pytest.fixture(scope="module")
def rows(app: FastAPI) -> dict[str, route_map.Row]:
    return {f"{' '.join(row.methods)} {row.path}": row for row in route_map.rows(app)}


def logic(row: route_map.Row) -> list[str]:
    return [f"{kind.__name__}.{method}" for kind, method in row.logic]


def test_the_committed_route_map_is_the_generated_one(app: FastAPI) -> None:
    committed = route_map.committed_block(route_map.ARCHITECTURE.read_text(encoding="utf-8"))
    assert committed == route_map.generated_block(app), (
        "docs/architecture.md's route map is out of date: run `.venv/bin/python infra/scripts/route_map.py`")


def test_the_check_mode_fails_on_a_stale_map(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "map.md"
    stale.write_text(f"# A\n\n{route_map.START}\n| route |\n{route_map.END}\n", encoding="utf-8")
    monkeypatch.setattr(route_map, "ARCHITECTURE", stale)
    assert route_map.main(["--check"]) == 1
    assert route_map.main([]) == 0
    assert "`POST /memory`" in stale.read_text(encoding="utf-8")
    assert route_map.main(["--check"]) == 0


@pytest.fixture(scope="module")
def documented(app: FastAPI) -> set[str]:
    """`METHOD /path` for every operation of the OpenAPI documents: the memory API's and the /kb app's."""
    kb = next(route.app for route in app.routes if getattr(route, "path", "") == "/kb")
    return {f"{method.upper()} {base}{path}" for base, document in (("", app.openapi()), ("/kb", kb.openapi()))
            for path, operations in document["paths"].items() for method in operations}


def test_the_map_covers_every_documented_route(documented: set[str], rows: dict[str, route_map.Row]) -> None:
    assert {"POST /memory", "POST /api/v1/chat/completions", "POST /kb/query"} <= documented
    assert documented - set(rows) == set()


def test_every_documented_route_leads_to_a_service(documented: set[str], rows: dict[str, route_map.Row]) -> None:
    """The second hop exists for each API route: its function calls a service method the map can name."""
    assert sorted(key for key in documented if not rows[key].logic) == []


def test_the_map_names_the_service_method_a_route_calls(rows: dict[str, route_map.Row]) -> None:
    assert logic(rows["POST /memory"]) == ["MemoryService.store"]
    assert logic(rows["GET /memory/search"]) == ["MemoryService.search", "MemoryService.reinforce"]
    # through the chat layer's attributes (chat.completions.prepare)
    assert logic(rows["POST /api/v1/chat/completions"]) == [
        "CompletionService.prepare", "CompletionService.stream", "CompletionService.complete"]
    assert logic(rows["POST /kb/query"]) == ["DocumentQueries.query"]
    assert logic(rows["POST /kb/index"]) == ["DocumentIndexing.enqueue"]  # inside the module's `_enqueue` helper
    assert logic(rows["GET POST PUT PATCH DELETE /api/v1/integrations"]) == []  # a refusal: its logic is its function
    assert logic(rows["POST /api/v1/claims/{claim_id}/retract"]) == ["ClaimService.retract"]
    for row in rows.values():
        for kind, method in row.logic:
            assert inspect.isfunction(getattr(kind, method)), (row.path, kind, method)
            assert ".services." in kind.__module__


def test_a_full_path_greps_to_its_decorator(rows: dict[str, route_map.Row]) -> None:
    """Hop one: the router module writes its prefix (and the /kb mount) literally, and each route is a decorator
    with its literal path, so `grep '"/query"'` or `grep 'prefix="/api/v1"'` finds the function."""
    outside_api = []
    for key, row in rows.items():
        if not API_MODULE.match(row.endpoint.__module__):
            outside_api.append(key)
            continue
        source = Path(inspect.getfile(row.endpoint)).read_text(encoding="utf-8")
        path = row.path
        if (mount := re.search(r'^BASE_PATH = "(/\w+)"$', source, re.MULTILINE)) and path.startswith(mount[1]):
            path = path.removeprefix(mount[1])
        if prefix := re.search(r'APIRouter\(prefix="([^"]+)"', source):
            assert path.startswith(prefix[1]), key
            path = path.removeprefix(prefix[1])
        method = row.methods[0].lower() if len(row.methods) == 1 else "api_route"
        assert f'@router.{method}("{path}"' in source, f"{key}: no @router.{method}(\"{path}\" in {row.endpoint}"
    assert outside_api == ["GET /dashboard"]  # the embedded host's redirect to its static dashboard


def test_each_chat_router_names_the_prefix_the_role_table_uses() -> None:
    for module in (claims, completions, events, history, memories, profiles, prompts, records, state, unsupported):
        assert module.router.prefix == PREFIX, module.__name__


def test_the_refusals_are_the_paths_the_role_table_opens(rows: dict[str, route_map.Row]) -> None:
    refused = [row.path.removeprefix(PREFIX) for row in rows.values()
               if row.endpoint.__module__ == unsupported.__name__]
    assert refused == list(UNSUPPORTED_PATHS)


def test_every_kb_route_has_its_hidden_trailing_slash_twin(app: FastAPI) -> None:
    served = {(path, getattr(route, "endpoint", None), getattr(route, "include_in_schema", None))
              for path, route in route_map.served_routes(app) if path.startswith("/kb/")}
    documented = {(path, endpoint) for path, endpoint, shown in served if shown and endpoint is not None
                  and endpoint.__module__.startswith("zengram.")}
    assert len(documented) == 16
    assert {(path, endpoint) for path, endpoint in documented if (f"{path}/", endpoint, False) not in served} == set()
