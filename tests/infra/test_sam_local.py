"""template.yaml as SAM local reads it (the SAM CLI's own providers, in its venv): with EndpointUrl set, as `make
local-cloud` runs it, every route but the two health checks passes its authorizer, and the emulator endpoints reach
every function; without it nothing changes for the cloud. SAM local silently drops an authorizer it cannot parse,
and an environment value it cannot resolve arrives empty, so both are checked where they happen."""

from __future__ import annotations

import json
import os
import subprocess
from functools import cache
from typing import Any

import pytest

from tests.infra.template_model import TEMPLATE
from tests.support import REPO_ROOT

SAM_PYTHON = REPO_ROOT / ".venv-sam" / "bin" / "python"
OPEN_PATHS = {"/health", "/kb/health"}
PROBE = """
import json, sys
from samcli.lib.providers.sam_stack_provider import SamLocalStackProvider
from samcli.lib.providers.api_provider import ApiProvider
from samcli.lib.providers.sam_function_provider import SamFunctionProvider
overrides = json.loads(sys.argv[2])
stacks, _ = SamLocalStackProvider.get_stacks(sys.argv[1], parameter_overrides=overrides)
routes = [{"path": r.path, "methods": sorted(r.methods), "function": r.function_name,
           "authorizer": r.authorizer_object.authorizer_name if r.authorizer_object else None,
           "authorizer_function": r.authorizer_object.lambda_name if r.authorizer_object else None}
          for r in ApiProvider(stacks).api.routes]
functions = {f.name: {k: (v if isinstance(v, str) else None)
                      for k, v in (f.environment or {}).get("Variables", {}).items()}
             for f in SamFunctionProvider(stacks).get_all()}
print(json.dumps({"routes": routes, "functions": functions}))
"""
pytestmark = pytest.mark.skipif(not SAM_PYTHON.exists(), reason="no SAM CLI venv (.venv-sam: `make install`)")


@cache
def sam_local_view(**overrides: str) -> dict[str, Any]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    result = subprocess.run([str(SAM_PYTHON), "-c", PROBE, str(TEMPLATE), json.dumps(overrides)], capture_output=True,
                            text=True, check=False, cwd=REPO_ROOT, env={**environment, "SAM_CLI_TELEMETRY": "0"})
    assert result.returncode == 0, result.stderr[-3000:]
    view: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return view


EMULATED = {"EndpointUrl": "http://host.containers.internal:5000"}


def test_on_emulators_every_route_but_health_passes_the_authorizer_function() -> None:
    routes = sam_local_view(**EMULATED)["routes"]
    assert len(routes) > 50
    for route in routes:
        if route["path"] in OPEN_PATHS:
            assert route["authorizer"] is None, route
        else:
            assert route["authorizer_function"] == "KeyAuthorizerFunction", route
            family = ("MnexiumKey" if route["path"].startswith("/api/v1/") else
                      "BearerToken" if route["path"].startswith("/kb/") else "ApiKey")
            assert route["authorizer"] == family, route


def test_in_the_cloud_configuration_sam_local_sees_the_alias_it_cannot_run() -> None:
    """Without EndpointUrl the authorizer is the alias, which SAM local cannot resolve: the routes it mounts then have
    no authorizer, which is why `make local-cloud` always sets EndpointUrl."""
    assert all(route["authorizer"] is None for route in sam_local_view()["routes"])


def test_the_emulator_endpoints_reach_every_function() -> None:
    functions = sam_local_view(**EMULATED, LambdaEndpointUrl="http://host.containers.internal:3001")["functions"]
    assert len(functions) == 20
    for name, variables in functions.items():
        assert variables["AWS_ENDPOINT_URL"] == EMULATED["EndpointUrl"], name
        assert variables["AWS_ENDPOINT_URL_SFN"] == EMULATED["EndpointUrl"], name
        assert variables["AWS_ENDPOINT_URL_LAMBDA"] == "http://host.containers.internal:3001", name
        # Declared, so --env-vars can set what SAM local cannot resolve (an !If, a resource's attribute).
        assert "ZENGRAM_OPENSEARCH_URL" in variables and variables["ZENGRAM_OPENSEARCH_URL"] is None, name
        assert {"ZENGRAM_OPENAI_BASE_URL", "ZENGRAM_OPENAI_API_KEY_SECRET_ID", "ZENGRAM_EMBEDDING_MODEL"} <= set(
            variables), name


def test_in_the_cloud_the_endpoint_variables_are_empty() -> None:
    for name, variables in sam_local_view()["functions"].items():
        assert variables["AWS_ENDPOINT_URL"] == variables["AWS_ENDPOINT_URL_LAMBDA"] == "", name
