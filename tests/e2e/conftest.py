"""The end-to-end suite's one cloud: `local_cloud` brings the local cloud up once per session (`infra.local_cloud`:
`sam local start-api` with every function in its own Lambda container, DynamoDB on moto's server, search on the
real OpenSearch node) and down at the end, and yields its state (api_url, api_key, admin_key, …).

Where containers cannot run (no podman, no SAM CLI, no base image tooling) the suite is skipped with the reason,
and fails instead under CI=true. `ZENGRAM_E2E_TARGET=embedded` points the same tests at an embedded server in this
process (what they were first written against): a quick check of the tests themselves, not of the cloud.
A cloud already up (`python -m infra.local_cloud up`, its state in .local-cloud/state.json, answering /health) is
reused and left running.

Every test under tests/e2e runs in the xdist group "e2e", so `pytest -n 2 --dist loadgroup` keeps them on one
worker: one cloud per run.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.chat.conftest import NO_LEARNING
from tests.llm_server import TEST_LLM_MODEL, ScriptedLLMServer
from tests.support import API_KEY, REPO_ROOT

HERE = Path(__file__).resolve().parent
STATE_DIR = REPO_ROOT / ".local-cloud"
SETUP_TIMEOUT = 1800  # bringing the cloud up from nothing builds the base image and the stack
TARGET_VARIABLE = "ZENGRAM_E2E_TARGET"
CONTAINER_HOST = "host.containers.internal"  # this machine, seen from a podman container


def required() -> bool:
    """In CI a cloud that cannot come up is a failure, never a skip."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def target() -> str:
    return os.environ.get(TARGET_VARIABLE, "local-cloud")


def unavailable(reason: str) -> None:
    if required():
        pytest.fail(f"the local cloud is required under CI=true: {reason}", pytrace=False)
    pytest.skip(f"the local cloud cannot run here: {reason}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each module that uses the cloud marks itself `pytest.mark.xdist_group("e2e")`: a group added here comes too late
    for `--dist loadgroup` (and beside a module's own group it would name a third), so two workers would each bring
    a cloud up in the same checkout."""
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.timeout(SETUP_TIMEOUT))


# -- the scripted model, reachable from the containers ----------------------------------------------------------


@pytest.fixture(scope="session")
def e2e_llm(local_cloud: dict[str, Any]) -> ScriptedLLMServer:
    """The scripted OpenAI-compatible server the stack's LLM and chat providers point at (emptied per test by
    `llm`). The cloud's own when it runs one this process can script; else the embedded target's."""
    server = local_cloud.get("_scripted_llm")
    if not isinstance(server, ScriptedLLMServer):
        pytest.skip("this local cloud's model server cannot be scripted from the tests")
    return server


@pytest.fixture
def llm(e2e_llm: ScriptedLLMServer) -> ScriptedLLMServer:
    e2e_llm.reset()
    return e2e_llm


# -- the cloud ----------------------------------------------------------------------------------------------------


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=10).status_code in (200, 503)
    except httpx.HTTPError:
        return False


def _running_cloud() -> dict[str, Any] | None:
    """A cloud a developer brought up already (its state file, its API answering)."""
    state_file = STATE_DIR / "state.json"
    if not state_file.exists():
        return None
    state: dict[str, Any] = json.loads(state_file.read_text())
    return state if state.get("api_url") and _answers(state["api_url"]) else None


def _why_containers_cannot_run() -> str | None:
    if shutil.which("podman") is None:
        return "podman is not installed (`make local-cloud` installs it where it may)"
    if not (REPO_ROOT / ".venv-sam" / "bin" / "sam").exists():
        return "the SAM CLI is missing (.venv-sam: `make install`)"
    try:
        import infra.local_cloud  # noqa: F401
    except ImportError as error:
        return f"infra.local_cloud cannot be imported ({error})"
    return None


@pytest.fixture(scope="session")
def local_cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The running cloud's state: api_url, api_key, admin_key, moto_url, opensearch_url, … (infra/local_cloud)."""
    if target() == "embedded":
        from tests.e2e.embedded import embedded_cloud

        with embedded_cloud(tmp_path_factory.mktemp("e2e-embedded")) as state:
            yield state
        return
    running = _running_cloud()
    if running is not None:
        yield {**running, "target": "local-cloud"}
        return
    reason = _why_containers_cannot_run()
    if reason is not None:
        unavailable(reason)
    from infra import local_cloud as cloud

    llm = ScriptedLLMServer(host="0.0.0.0", advertised_host=CONTAINER_HOST).start()
    llm.default(NO_LEARNING)
    started = time.monotonic()
    try:
        state = cloud.up(STATE_DIR, env=scripted_model_environment(llm))
    except BaseException:
        llm.stop()
        raise
    state = {**state, "target": "local-cloud", "up_seconds": round(time.monotonic() - started, 1),
             "_scripted_llm": llm}
    mark = time.monotonic()
    state["cold_starts"] = warm_up(state["api_url"], state["api_key"])
    state["warm_up_seconds"] = round(time.monotonic() - mark, 1)
    try:
        yield state
    finally:
        cloud.down(STATE_DIR)
        llm.stop()


# One route per function behind start-api, with the header its authorizer reads: (method, path, body, header).
WARM_UP = [
    ("GET", "/health", None, None), ("GET", "/stats", None, "x-api-key"),
    ("GET", "/memory/search?q=warm", None, "x-api-key"), ("GET", "/export?limit=1", None, "x-api-key"),
    ("GET", "/entities?limit=1", None, "x-api-key"), ("GET", "/clients", None, "x-api-key"),
    ("GET", "/admin/keys", None, "x-api-key"), ("GET", "/consolidate/status", None, "x-api-key"),
    ("POST", "/reflect", {"topic": ""}, "x-api-key"), ("POST", "/research", {"topic": ""}, "x-api-key"),
    ("GET", "/kb/health/status", None, "authorization"),
    ("GET", "/api/v1/memories?subject_id=warm-up", None, "x-mnexium-key"),
    ("GET", "/api/v1/chat/history/list?subject_id=warm-up", None, "x-mnexium-key"),
]


def warm_up(api_url: str, key: str, attempts: int = 3) -> dict[str, list[int]]:
    """Each function's container started before the tests: with --warm-containers LAZY, SAM counts a container's
    start and the runtime's init in the function's Timeout (10 s for the authorizer, 29 s for the others), which a
    loaded 2-core machine can exceed, and start-api then answers 502 "Internal server error" to that first call.
    Lambda gives init a budget of its own (and SnapStart restores it), so the emulator's cold-start 502 is not the
    product's behaviour: the first calls are made here and retried; the answers are kept in the state
    (`cold_starts`) for the report."""
    seen: dict[str, list[int]] = {}
    for method, path, body, header in WARM_UP:
        headers = {} if header is None else {header: f"Bearer {key}" if header == "authorization" else key}
        statuses = seen.setdefault(f"{method} {path}", [])
        for _ in range(attempts):
            try:
                statuses.append(httpx.request(method, f"{api_url}{path}", json=body, headers=headers,
                                              timeout=180).status_code)
            except httpx.HTTPError:
                statuses.append(0)
            if statuses[-1] not in (0, 502):
                break
    return seen


def scripted_model_environment(llm: ScriptedLLMServer) -> dict[str, str]:
    """The functions' language model (reflect, research, consolidation, chat learning) and the chat layer's default
    provider, both on the scripted server (variables the template declares, so `--env-vars` reaches them)."""
    return {"ZENGRAM_LLM_BASE_URL": llm.base_url, "ZENGRAM_LLM_MODEL": TEST_LLM_MODEL,
            "ZENGRAM_CHAT_DEFAULT_BASE_URL": llm.url_for("openai")}


@pytest.fixture(scope="session")
def api_url(local_cloud: dict[str, Any]) -> str:
    url: str = local_cloud["api_url"].rstrip("/")
    return url


@pytest.fixture(scope="session")
def api_key(local_cloud: dict[str, Any]) -> str:
    key: str = local_cloud.get("api_key") or API_KEY
    return key


@pytest.fixture(scope="session")
def at_the_edge(local_cloud: dict[str, Any]) -> bool:
    """Whether an API Gateway emulator (and its authorizers) stands in front of the functions."""
    return bool(local_cloud["target"] == "local-cloud")


@pytest.fixture
def api(api_url: str, api_key: str) -> Iterator[httpx.Client]:
    """Plain HTTP to the API with the key every Zengram client sends (x-api-key)."""
    with httpx.Client(base_url=api_url, headers={"x-api-key": api_key}, timeout=120) as client:
        yield client
