"""Where the SDK connects when told nothing (docs/clients.md: BRAIN_API_URL / BRAIN_API_KEY, else the local
embedded server and its generated key file), and that the async client has every method of the sync one."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

import pytest
from zengram.client import AsyncBrainClient, BrainClient
from zengram.embedded.background import BackgroundServer

from tests.support import API_KEY


@pytest.fixture
def bare_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No BRAIN_*/ZENGRAM_* connection variables; the working folder is an empty temp folder."""
    for name in ("BRAIN_API_URL", "BRAIN_API_KEY", "ZENGRAM_API_KEY", "ZENGRAM_HOST", "ZENGRAM_PORT",
                 "ZENGRAM_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_environment_variables_name_the_server_and_key(
    live_server: BackgroundServer, bare_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRAIN_API_URL", live_server.url + "/")
    monkeypatch.setenv("BRAIN_API_KEY", API_KEY)

    with BrainClient(source_agent="env-test") as brain:
        stored = brain.store(type="event", content="Configured from the environment")

    assert brain.url == live_server.url
    assert stored.deduplicated is False


def test_unset_it_finds_the_local_server_and_its_key_file(
    live_server: BackgroundServer, bare_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = bare_environment / "brain-data"
    data_dir.mkdir()
    (data_dir / "api-key").write_text(API_KEY + "\n")
    monkeypatch.setenv("ZENGRAM_PORT", str(live_server.port))
    monkeypatch.setenv("ZENGRAM_DATA_DIR", str(data_dir))

    with BrainClient() as brain:
        total = brain.stats().total_memories

    async def via_async() -> str:
        async with AsyncBrainClient() as client:
            return (await client.health()).status

    assert brain.url == live_server.url and total == 0
    assert asyncio.run(via_async()) == "ok"


def test_the_default_key_file_is_the_one_in_the_working_folder(
    live_server: BackgroundServer, bare_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (bare_environment / ".zengram").mkdir()
    (bare_environment / ".zengram" / "api-key").write_text(API_KEY + "\n")
    monkeypatch.setenv("BRAIN_API_URL", live_server.url)

    with BrainClient() as brain:
        assert brain.stats().total_memories == 0


def test_async_client_has_every_method_of_the_sync_client_with_the_same_arguments() -> None:
    def public(cls: type) -> dict[str, inspect.Signature]:
        return {name: inspect.signature(member) for name, member in vars(cls).items()
                if callable(member) and not name.startswith("_")}

    sync, asynchronous = public(BrainClient), public(AsyncBrainClient)

    assert set(sync) == set(asynchronous)
    for name in ("store", "search", "briefing", "query", "stats", "entities", "export", "import_", "consolidate",
                 "reflect", "research", "update", "delete", "get", "restore", "entity_stats", "consolidation_job",
                 "consolidation_status", "put_client", "get_client", "list_clients", "delete_client"):
        assert name in sync, name
    for name, signature in sync.items():
        assert list(asynchronous[name].parameters) == list(signature.parameters), name
        if name not in ("with_request_id", "export_all"):
            assert inspect.iscoroutinefunction(getattr(AsyncBrainClient, name)), name
