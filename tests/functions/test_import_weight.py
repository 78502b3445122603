"""What each Lambda function imports at init (#18 §5): its own group's router and bodies, and nothing of the rest.

A function's init is the import of its module (`functions/<name>/app.py`). An on-demand init must not import the
AWS SDK, the search, embedding or LLM clients, Powertools (built on the first invocation), the container's wiring
and settings (built on the first request), nor another group's routes or response bodies: each of those costs
milliseconds of every cold start (`make bench-coldstart` measures them). Each function is imported in a fresh
interpreter and its `sys.modules` checked, so a stray top-level import fails here rather than slowing cold starts
unnoticed. A primed init (SnapStart) builds all of it on purpose: tests/unit/test_snapstart_priming.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS = sorted(path.name for path in (ROOT / "functions").iterdir() if (path / "app.py").is_file())

# Packages no function imports at an on-demand init (the first request or the first invocation does).
HEAVY_PACKAGES = frozenset({
    "boto3", "botocore", "opensearchpy", "onnxruntime", "numpy", "openai", "httpx", "aws_xray_sdk",
    "aws_lambda_powertools", "pydantic_settings", "pypdf",
})
# The container's wiring, settings and adapters: built with the container, on the first request.
WIRING_MODULES = ("zengram.assembly.containers", "zengram.memory.wiring", "zengram.chat.wiring",
                  "zengram.documents.wiring", "zengram.settings", "zengram.kernel.settings", "zengram.memory.settings",
                  "zengram.chat.settings", "zengram.documents.settings", "zengram.memory.ports", "zengram.chat.ports",
                  "zengram.adapters", "zengram.memory.services", "zengram.chat.services", "zengram.documents.services")
# The API modules of one endpoint group (routes, dependencies, bodies), as `zengram.` leaves them.
GROUP_PREFIXES = ("zengram.memory.api.", "zengram.chat.api.", "zengram.documents.api.")
# the role table of every route, which each function's access check reads; the memory groups' shared dependencies
# and body helpers
SHARED_API = frozenset({"memory.api.roles", "chat.api.roles", "documents.api.roles", "memory.api.deps",
                        "memory.api.schemas"})
# what both chat functions' routes use
CHAT_SHARED = frozenset({"chat.api.deps", "chat.api.groups", "chat.api.schemas", "chat.api.audit"})
M, C = "memory.api.", "chat.api."  # a memory group's routes and bodies; a chat group's
# What each HTTP function serves; None: not an HTTP function, so no FastAPI at all.
SERVED: dict[str, frozenset[str] | None] = {
    "admin": frozenset({M + "admin", M + "schemas.keys"}),
    "briefing": frozenset({M + "briefing", M + "stats", M + "collections", M + "schemas.briefing",
                           M + "schemas.stats", M + "schemas.collections", M + "schemas.records"}),
    "chat": CHAT_SHARED | {C + "completions", C + "schemas.completions", C + "messages", C + "schemas.messages",
                           C + "history", C + "schemas.history",
                           C + "state", C + "schemas.state", C + "prompts", C + "schemas.prompts"},
    "chat_data": CHAT_SHARED | {C + "memories", C + "schemas.memories", C + "records", C + "schemas.records",
                                C + "claims", C + "schemas.claims", C + "profiles", C + "policies",
                                C + "schemas.policies", C + "events", C + "schemas.events", C + "integrations",
                                C + "schemas.integrations"},
    "clients": frozenset({M + "clients", M + "schemas.clients"}),
    "consolidate": frozenset({M + "consolidate", M + "schemas.consolidation"}),
    "documents": frozenset({"documents.api.app", "documents.api.routes", "documents.api.schemas"}),
    "entities": frozenset({M + "entities", M + "schemas.entities", M + "schemas.records"}),
    "export": frozenset({M + "export", M + "schemas.export", M + "schemas.records"}),
    "health": frozenset({M + "health", M + "schemas.health"}),
    "memory": frozenset({M + "memory", M + "schemas.memory", M + "schemas.records"}),
    "reflect": frozenset({M + "reflect"}),
    "research": frozenset({M + "research", M + "schemas.research"}),
    "authorizer": None, "bootstrap": None, "chat_learning": None, "documents_step": None,
    "documents_watch": None, "repair": None,
    "research_step": None,
}
PROBE = "import json, sys\nimport app\nprint(json.dumps(sorted(sys.modules)))"


def modules_after_init(function: str) -> set[str]:
    """`sys.modules` once a fresh interpreter has imported the function's module, as an on-demand init does."""
    folder = ROOT / "functions" / function
    environment = {"PATH": os.environ.get("PATH", ""),
                   "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT / "shared")]),
                   "AWS_REGION": "eu-west-1", "AWS_LAMBDA_FUNCTION_NAME": function,
                   "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand", "BRAIN_API_KEY": "sample-api-key"}
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=folder, env=environment, capture_output=True,
                            text=True, check=False, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    return set(json.loads(result.stdout.strip().splitlines()[-1]))


def within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == package or module.startswith(f"{package}.") for package in packages)


def test_every_function_says_what_it_serves() -> None:
    assert set(SERVED) == set(FUNCTIONS)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_an_init_imports_only_what_the_function_serves(function: str) -> None:
    loaded = modules_after_init(function)

    heavy = sorted(name for name in loaded if name.split(".")[0] in HEAVY_PACKAGES)
    wiring = sorted(name for name in loaded if within(name, WIRING_MODULES))
    groups = {name.removeprefix("zengram.") for name in loaded if name.startswith(GROUP_PREFIXES)} - SHARED_API
    served = SERVED[function]

    assert heavy == [], f"{function} imports at init: {heavy}"
    assert wiring == [], f"{function} imports the container's wiring at init: {wiring}"
    if served is None:
        assert "fastapi" not in loaded and groups == set(), sorted(groups)
    else:
        assert groups <= served, f"{function} imports other groups' API modules: {sorted(groups - served)}"
        assert served & groups, f"{function} no longer imports its own routes: {sorted(groups)}"


# Each chat function's domain models: the other one's are not built at its init (a chat turn's requests, history,
# prompts and state; a subject's memories, records and their requests; the learning and recall models load with
# the services, on the first request).
CHAT_TURN_MODELS = ("zengram.chat.domain.requests", "zengram.chat.domain.history", "zengram.chat.domain.prompts",
                    "zengram.chat.domain.state", "zengram.chat.domain.providers")
CHAT_DATA_MODELS = ("zengram.chat.domain.data_requests", "zengram.chat.domain.memories",
                    "zengram.chat.domain.records", "zengram.chat.domain.claims")
CHAT_SERVICE_MODELS = ("zengram.chat.domain.learning", "zengram.chat.domain.recalls")
# The chat_data function builds its routers on the first request under their paths: its init builds none of them,
# and so none of their models either.
CHAT_DATA_ROUTES = tuple(f"zengram.chat.api.{name}" for name in (
    "memories", "claims", "profiles", "policies", "records", "integrations", "events", "schemas.memories"))
NOT_AT_INIT = {"chat": CHAT_DATA_MODELS + CHAT_SERVICE_MODELS,
               "chat_data": CHAT_TURN_MODELS + CHAT_SERVICE_MODELS + CHAT_DATA_MODELS + CHAT_DATA_ROUTES}


@pytest.mark.parametrize("function", sorted(NOT_AT_INIT))
def test_a_chat_function_builds_only_its_own_models_at_init(function: str) -> None:
    loaded = modules_after_init(function)

    assert sorted(name for name in loaded if within(name, NOT_AT_INIT[function])) == []


def test_a_chat_data_request_builds_only_the_routers_of_its_path() -> None:
    """GET /api/v1/records/… builds the records router; /api/v1/memories/… the memories router and the claims
    router (which serves /api/v1/memories/{memory_id}/claims); no other."""
    folder = ROOT / "functions" / "chat_data"
    probe = ("import json, sys\nimport app\nrouters = app.app.state.lazy_routers\n"
             "routers.include_for('/api/v1/records/orders/r1')\nfirst = sorted(routers.included)\n"
             "routers.include_for('/api/v1/memories/m1/claims')\n"
             "print(json.dumps([first, sorted(routers.included), 'zengram.chat.api.integrations' in sys.modules]))")
    environment = {"PATH": os.environ.get("PATH", ""), "AWS_REGION": "eu-west-1", "BRAIN_API_KEY": "sample-api-key",
                   "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT / "shared")])}
    result = subprocess.run([sys.executable, "-c", probe], cwd=folder, env=environment, capture_output=True, text=True,
                            check=False, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    first, then, integrations = json.loads(result.stdout.strip().splitlines()[-1])
    assert (first, then, integrations) == (["records"], ["claims", "memories", "records"], False)
