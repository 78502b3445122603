"""SnapStart: an init that is snapshotted (or kept warm) primes the function before the snapshot, a restore reseeds
randomness, and the X-Ray SDK is imported on the first request or while priming, never at import."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import snapshot_restore_py
from fastapi import APIRouter
from zengram.serverless import handlers as serverless
from zengram.web.lazy_routes import LazyRouters

from tests.support import REPO_ROOT


@pytest.fixture
def restore_hooks() -> Iterator[list[Any]]:
    """The hooks Lambda's runtime would call after a restore (snapshot_restore_py's own registry)."""
    registry: list[Any] = snapshot_restore_py._after_restore_registry  # type: ignore[attr-defined]
    saved, saved_registered = list(registry), set(serverless._registered_after_restore)
    registry.clear()
    serverless._registered_after_restore.clear()
    yield registry
    registry[:] = saved
    serverless._registered_after_restore.clear()
    serverless._registered_after_restore.update(saved_registered)


@pytest.mark.parametrize("init_type", ["snap-start", "provisioned-concurrency"])
def test_a_snapshotted_or_kept_warm_init_is_primed(monkeypatch: pytest.MonkeyPatch, restore_hooks: list[Any],
                                                  init_type: str) -> None:
    monkeypatch.setenv("AWS_LAMBDA_INITIALIZATION_TYPE", init_type)
    primed: list[str] = []
    serverless.prepare_execution_environment(lambda: primed.append("primed"))
    assert primed == ["primed"]


@pytest.mark.parametrize("init_type", ["on-demand", None])
def test_an_on_demand_init_leaves_the_work_to_the_first_request(monkeypatch: pytest.MonkeyPatch,
                                                               restore_hooks: list[Any], init_type: str | None) -> None:
    if init_type is None:
        monkeypatch.delenv("AWS_LAMBDA_INITIALIZATION_TYPE", raising=False)
    else:
        monkeypatch.setenv("AWS_LAMBDA_INITIALIZATION_TYPE", init_type)
    primed: list[str] = []
    serverless.prepare_execution_environment(lambda: primed.append("primed"))
    assert primed == []


def test_a_failure_while_priming_is_logged_not_raised(monkeypatch: pytest.MonkeyPatch, restore_hooks: list[Any],
                                                     caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("AWS_LAMBDA_INITIALIZATION_TYPE", "snap-start")

    def unreachable() -> None:
        raise ConnectionError("secrets manager unreachable")

    serverless.prepare_execution_environment(unreachable)
    assert "priming during init failed" in caplog.text


def test_randomness_is_reseeded_after_each_restore(restore_hooks: list[Any]) -> None:
    serverless.prepare_execution_environment(lambda: None)
    serverless.prepare_execution_environment(lambda: None)  # a second handler in the process: one hook
    assert [hook for hook, _, _ in restore_hooks] == [serverless.reseed_randomness]

    random.seed(42)  # what every environment restored from one snapshot would share
    snapshot = random.getstate()
    first_restore = [random.random() for _ in range(4)]
    random.setstate(snapshot)
    for hook, args, kwargs in restore_hooks:
        hook(*args, **kwargs)
    second_restore = [random.random() for _ in range(4)]
    assert second_restore != first_restore


def test_a_lazy_handler_is_built_once_on_first_use_or_when_primed() -> None:
    builds: list[str] = []

    def build() -> serverless.LambdaHandler:
        builds.append("built")
        return lambda event, context: {"statusCode": 200}

    handler = serverless.lazily(build)
    assert builds == []
    assert handler({}, None) == {"statusCode": 200} and handler({}, None) == {"statusCode": 200}
    assert builds == ["built"] and handler.built() is handler.built()


def test_importing_a_function_does_not_import_the_xray_sdk() -> None:
    probe = ("import sys; sys.path.insert(0, 'functions/memory'); import app; "
             "print(any(name.startswith('aws_xray_sdk') for name in sys.modules))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                            cwd=REPO_ROOT, env={"PATH": "/usr/bin:/bin", "AWS_REGION": "eu-west-1",
                                                "PYTHONPATH": str(REPO_ROOT / "shared")})
    assert result.stdout.strip() == "False"


def test_priming_an_http_function_builds_its_container_and_answers_nothing(
        monkeypatch: pytest.MonkeyPatch, restore_hooks: list[Any], tmp_path: Any) -> None:
    """The memory function's priming under SnapStart: the container is built (clients, numpy), the key read, and
    one unauthenticated request runs the middleware; nothing is stored."""
    monkeypatch.setenv("AWS_LAMBDA_INITIALIZATION_TYPE", "snap-start")
    environment = {"BRAIN_API_KEY": "k", "ZENGRAM_DATA_DIR": str(tmp_path), "ZENGRAM_EMBEDDER": "bedrock",
                   "ZENGRAM_EMBEDDING_DIMENSIONS": "1024", "AWS_REGION": "eu-west-1",
                   "POWERTOOLS_TRACE_DISABLED": "true", "POWERTOOLS_METRICS_NAMESPACE": "ZengramTest"}
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    from zengram.adapters.aws_lambda import metrics
    from zengram.memory.api import memory

    # A fresh execution environment: priming builds its Powertools objects, which later tests must not inherit.
    monkeypatch.setattr(serverless, "OBSERVABILITY", serverless.LambdaObservability())
    monkeypatch.setattr(metrics, "_shared", None)
    loaded: list[str] = []  # a router the app would build on the first request under /later (chat_data's way)

    def load(name: str) -> APIRouter:
        loaded.append(name)
        return APIRouter()

    lazy = LazyRouters("/later", {"pets": ("pets",)}, load)
    app = serverless.create_function_app([memory.router], lazy_routers=lazy)
    handler = serverless.http_handler(app)
    assert handler._built is not None  # Powertools' decorators and Mangum, before the first request
    assert loaded == ["pets"]  # every route the function serves, before the snapshot
    container = app.state.provider.peek()
    assert container is not None and type(container.embedder).__name__ == "BedrockEmbedder"
    from zengram.adapters.system import SystemClock

    assert container.counters.stats(SystemClock().now(), 0.98).total == 0
