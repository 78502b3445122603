"""Fixtures of the API suites.

- `shared_client`: a module-scoped app for tests whose outcome cannot depend on what other tests did: refusals
  (400/401/404/409, which change nothing), stores of unique content, set-based searches over a fixed corpus. They
  share one data folder per module instead of paying for a fresh container each; everything else uses `client`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import build_container
from zengram.embedded.app import build_embedded_app
from zengram.kernel.ports import Embedder
from zengram.settings import Settings

from tests.support import API_KEY, TickingClock


@pytest.fixture(scope="module")
def shared_client(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Iterator[TestClient]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("shared") / "data", api_key=API_KEY,
                        rate_limit_enabled=False)
    container = build_container(settings, embedder=minilm, clock=TickingClock())
    try:
        with TestClient(build_embedded_app(settings, container), headers={"x-api-key": API_KEY}) as test_client:
            yield test_client
    finally:
        container.close()


@pytest.fixture(scope="module")
def shared_memory_id(shared_client: TestClient) -> str:
    """One event in the shared app, for refusals that need an existing id."""
    response = shared_client.post("/memory", json={
        "type": "event", "content": "Acme's trial of the analytics add-on ends on Friday",
        "source_agent": "claude-code", "client_id": "acme-corp",
    })
    assert response.status_code == 201, response.text
    memory_id: str = response.json()["id"]
    return memory_id
