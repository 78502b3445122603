"""Fixtures shared by every suite."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import Container, build_container
from zengram.embedded.app import build_embedded_app
from zengram.kernel.ports import Embedder
from zengram.settings import Settings

from tests.llm_server import ScriptedLLMServer, settings_with_llm
from tests.opensearch_node import ManagedNode, start_for_session
from tests.support import API_KEY, HashingEmbedder, TickingClock


@pytest.fixture(autouse=True)
def _service_loggers_restored() -> Iterator[None]:
    """A Lambda handler hands the services' `zengram` loggers to Powertools (their own handler, no propagation):
    each test starts, and leaves them, as they were, so caplog still sees them in every later test."""
    logger = logging.getLogger("zengram")
    saved = (list(logger.handlers), logger.propagate, logger.level)
    yield
    logger.handlers[:] = saved[0]
    logger.propagate, logger.level = saved[1], saved[2]


@pytest.fixture(scope="session")
def minilm() -> Embedder:
    """The real offline model as the product runs it (default runtime, merged passes), loaded once per session."""
    from zengram.adapters.minilm import build_minilm_embedder
    from zengram.adapters.system.coalescing_embedder import CoalescingEmbedder

    defaults = Settings()
    embedder = CoalescingEmbedder(build_minilm_embedder(defaults.minilm_runtime,
                                                        lone_pass_threads=defaults.minilm_lone_pass_threads),
                                  max_parallel_passes=defaults.minilm_parallel_passes)
    embedder.embed(["warm up"])
    return embedder


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # Rate limits off: suites store far more than 60 memories a minute; tests/api/test_rate_limits.py turns them on.
    return Settings(data_dir=tmp_path / "data", api_key=API_KEY, rate_limit_enabled=False)


@pytest.fixture
def clock() -> TickingClock:
    return TickingClock()


@pytest.fixture
def container(settings: Settings, minilm: Embedder, clock: TickingClock) -> Iterator[Container]:
    built = build_container(settings, embedder=minilm, clock=clock)
    yield built
    built.close()


@pytest.fixture
def client(settings: Settings, container: Container) -> Iterator[TestClient]:
    """The embedded app over HTTP (in-process), authenticated, with the real embedding model."""
    app = build_embedded_app(settings, container)
    with TestClient(app, headers={"x-api-key": API_KEY}) as test_client:
        yield test_client


@pytest.fixture
def hashing_container(settings: Settings, clock: TickingClock) -> Iterator[Container]:
    """A container with a cheap deterministic embedder, for tests about mechanics rather than meaning."""
    built = build_container(settings, embedder=HashingEmbedder(), clock=clock)
    yield built
    built.close()


@pytest.fixture(scope="session")
def _scripted_llm_server() -> Iterator[ScriptedLLMServer]:
    server = ScriptedLLMServer().start()
    yield server
    server.stop()


@pytest.fixture
def llm_server(_scripted_llm_server: ScriptedLLMServer) -> ScriptedLLMServer:
    """The scripted OpenAI-compatible chat server (one per session), emptied for each test."""
    _scripted_llm_server.reset()
    return _scripted_llm_server


@pytest.fixture
def llm_settings(settings: Settings, llm_server: ScriptedLLMServer) -> Settings:
    """`settings` with the language model pointed at `llm_server`."""
    return settings_with_llm(settings, llm_server)


# -- the real OpenSearch node (tests/opensearch_node.py) -------------------------------------------------------

_opensearch_key = pytest.StashKey[ManagedNode | None]()


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker: the controller started the node
        return
    config.stash[_opensearch_key] = start_for_session(config.args)


def pytest_unconfigure(config: pytest.Config) -> None:
    node = config.stash.get(_opensearch_key, None)
    if node is not None:
        node.stop()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    node = config.stash.get(_opensearch_key, None)
    if node is not None and node.ready_after is not None:
        cpu = node.cpu_seconds()
        terminalreporter.write_line(f"OpenSearch test node: built if needed and ready {node.ready_after:.1f} s "
                                    f"after the session started" + (f"; {cpu:.0f} s of CPU" if cpu else ""))
