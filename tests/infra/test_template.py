"""template.yaml: lints clean, transforms, and agrees with the code it deploys."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from fastapi import FastAPI
from samtranslator.translator.transform import transform
from starlette.routing import Mount

from tests.functions.invoke import load_function_module
from tests.infra.template_model import TEMPLATE, as_packaged, functions, load_template
from tests.support import REPO_ROOT

BIN = Path(sys.executable).parent


def api_routes(app: FastAPI) -> set[tuple[str, str]]:
    """Every (METHOD, path) the app serves, read from its OpenAPI document and those of the apps it mounts."""
    routes = {(method.upper(), path) for path, operations in app.openapi()["paths"].items() for method in operations}
    for route in app.routes:
        if isinstance(route, Mount) and isinstance(route.app, FastAPI):
            routes |= {(method, f"{route.path}{path}") for method, path in api_routes(route.app)}
    return routes


def under_proxy(route: tuple[str, str], proxies: set[tuple[str, str]]) -> bool:
    """Whether a greedy route (`ANY /kb/{proxy+}`) takes this one."""
    return any(method in ("ANY", route[0]) and route[1].startswith(path.removesuffix("{proxy+}"))
               for method, path in proxies)


class NoManagedPolicies:
    def load(self) -> dict[str, str]:
        return {}


def test_cfn_lint_with_serverless_rules_passes() -> None:
    result = subprocess.run(
        [str(BIN / "cfn-lint"), "--append-rules", "cfn_lint_serverless.rules", "--", str(TEMPLATE)],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_sam_transform_succeeds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    output = transform(as_packaged(load_template()), {}, NoManagedPolicies())
    resource_types = {resource["Type"] for resource in output["Resources"].values()}
    assert {"AWS::Lambda::Function", "AWS::ApiGatewayV2::Api", "AWS::Lambda::LayerVersion"} <= resource_types
    assert not any(kind.startswith("AWS::Serverless::") for kind in resource_types)


@pytest.mark.parametrize("function", functions(load_template()), ids=lambda f: f.logical_id)
def test_every_function_has_a_handler_and_event_samples(function: object) -> None:
    from tests.infra.template_model import FunctionSpec

    assert isinstance(function, FunctionSpec)
    module_name, handler_name = function.handler.rsplit(".", 1)
    assert (function.code_dir / f"{module_name}.py").is_file()
    samples = sorted((REPO_ROOT / "events" / function.group).glob("*.json"))
    assert samples, f"events/{function.group}/ has no sample events"
    module = load_function_module(function.group)
    assert callable(getattr(module, handler_name))


HTTP_FUNCTIONS = [function for function in functions(load_template()) if function.routes]
CATCH_ALL = ("ANY", "/api/v1/{proxy+}")  # the chat data function's refusals of what the layer does not offer (501)


def documented(routes: frozenset[tuple[str, str]]) -> set[tuple[str, str]]:
    """A function's routes but the catch-all that sends undocumented /api/v1 paths to it."""
    return set(routes) - {CATCH_ALL}


@pytest.mark.parametrize("function", HTTP_FUNCTIONS, ids=lambda f: f.logical_id)
def test_template_routes_match_the_function_app(function: object) -> None:
    from tests.infra.template_model import FunctionSpec

    assert isinstance(function, FunctionSpec)
    app = load_function_module(function.group).app
    proxies = {route for route in function.routes if route[1].endswith("{proxy+}")} - {CATCH_ALL}
    served = api_routes(app)
    explicit = documented(function.routes) - proxies
    # A route under a proxy may be deployed on its own (GET /kb/health: open, unlike the rest of /kb) if served.
    assert {route for route in served if not under_proxy(route, proxies)} == {
        route for route in explicit if not under_proxy(route, proxies)}
    assert {route for route in explicit if under_proxy(route, proxies)} <= served
    for proxy in proxies:
        assert any(under_proxy(route, {proxy}) for route in served), f"{proxy} takes no route of the app"


def test_every_embedded_route_is_deployed_and_nothing_else() -> None:
    from zengram.documents.api import app as kb
    from zengram.embedded.app import ROUTERS

    every_route = set().union(*(documented(function.routes) for function in HTTP_FUNCTIONS))
    embedded = FastAPI()
    for router in ROUTERS:
        embedded.include_router(router)
    embedded.mount(kb.BASE_PATH, kb.create_kb_app(kb.Lazy(lambda: None)))  # type: ignore[arg-type, return-value]
    proxies = {route for route in every_route if route[1].endswith("{proxy+}")}
    served = api_routes(embedded)
    explicit = every_route - proxies
    assert {route for route in served if not under_proxy(route, proxies)} == {
        route for route in explicit if not under_proxy(route, proxies)}
    assert {route for route in explicit if under_proxy(route, proxies)} <= served
    assert all(any(under_proxy(route, {proxy}) for route in served) for proxy in proxies)


def test_only_the_chat_data_function_catches_undocumented_paths() -> None:
    assert [f.logical_id for f in HTTP_FUNCTIONS if CATCH_ALL in f.routes] == ["ChatDataFunction"]


def test_no_route_is_served_by_two_functions() -> None:
    seen: dict[tuple[str, str], str] = {}
    for function in HTTP_FUNCTIONS:
        for route in function.routes:
            assert route not in seen, f"{route} in {seen.get(route)} and {function.logical_id}"
            seen[route] = function.logical_id


def test_sam_validate_lint_passes(tmp_path: Path) -> None:
    sam = REPO_ROOT / ".venv-sam" / "bin" / "sam"
    assert sam.exists(), "SAM CLI missing: `make install` puts it in .venv-sam"
    result = subprocess.run(
        [str(sam), "validate", "--lint", "--template-file", str(TEMPLATE)],
        capture_output=True, text=True, check=False, cwd=REPO_ROOT,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "SAM_CLI_TELEMETRY": "0",
             "AWS_DEFAULT_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "is a valid SAM Template" in result.stdout + result.stderr


def test_every_function_restores_from_a_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    output = transform(as_packaged(load_template()), {}, NoManagedPolicies())
    lambdas = [r for r in output["Resources"].values() if r["Type"] == "AWS::Lambda::Function"]
    assert lambdas
    assert all(r["Properties"]["SnapStart"] == {"ApplyOn": "PublishedVersions"} for r in lambdas)
    assert all(r["Properties"]["Runtime"] == "python3.13" for r in lambdas)
