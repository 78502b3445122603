"""Zengram's own clients through the emulated API Gateway: the Python SDK (`zengram.client`), the `zengram` command
(a real process: its console script) and the MCP server (`zengram-mcp`, started over stdio by the MCP SDK's client).
tests/clients covers each against the embedded server; here they reach the functions' containers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from zengram.client import AuthenticationError, BrainClient, ForbiddenError, NotFoundError

from tests.clients.test_mcp import Recorder, payload
from tests.e2e.helpers import eventually, unique
from tests.support import REPO_ROOT

pytestmark = pytest.mark.xdist_group("e2e")  # one worker, one cloud (conftest.py)

ZENGRAM = Path(sys.executable).parent / "zengram"


def test_the_sdk(api_url: str, api_key: str, at_the_edge: bool) -> None:
    client_id = unique("sdk")
    with BrainClient(url=api_url, api_key=api_key, source_agent="sdk-e2e", max_retries=0) as brain:
        old = brain.store(type="fact", content=f"{client_id} deploys on Tuesdays", key="deploys", client_id=client_id)
        new = brain.store(type="fact", content=f"{client_id} deploys on Thursdays", key="deploys",
                          client_id=client_id)
        assert new.supersedes == old.id
        found = eventually(lambda: brain.search("deploys Thursdays", client_id=client_id),
                           lambda body: bool(body.results))
        assert [hit["id"] for hit in found.results] == [new.id]
        assert brain.query("facts", key="deploys", client_id=client_id).results[0]["id"] == new.id
        assert brain.get(new.id).source_agent == "sdk-e2e"
        assert brain.update(new.id, importance="high").updated_fields == ["importance"]
        assert brain.restore(old.id).restored is True
        assert brain.delete(new.id, reason="wrong day").deleted is True
        exported = brain.export(client_id=client_id)
        assert {memory["id"] for memory in exported.memories} == {old.id}
        assert brain.entity(client_id).entity_type == "client"
        assert brain.stats().total_memories >= 1 and brain.health().status in ("ok", "healthy")
        with pytest.raises(NotFoundError):
            brain.get(unique("missing"))
    with BrainClient(url=api_url, api_key="not-a-key", max_retries=0) as stranger, \
            pytest.raises(ForbiddenError if at_the_edge else AuthenticationError):
        stranger.stats()


def cli(api_url: str, api_key: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "BRAIN_API_URL": api_url, "BRAIN_API_KEY": api_key, "BRAIN_MAX_RETRIES": "0",
                   "COLUMNS": "200", "PYTHONPATH": str(REPO_ROOT / "shared")}
    return subprocess.run([str(ZENGRAM), *arguments], env=environment, capture_output=True, text=True, timeout=180,
                          check=False)


def test_the_cli(api_url: str, api_key: str, tmp_path: Path) -> None:
    client_id = unique("cli")
    stored = cli(api_url, api_key, "store", "event", f"{client_id} nightly backup finished", "--client", client_id,
                 "--agent", "backup-bot", "--json")
    assert stored.returncode == 0, stored.stderr
    memory_id = json.loads(stored.stdout)["id"]

    def search() -> subprocess.CompletedProcess[str]:
        return cli(api_url, api_key, "search", "nightly backup", "--client", client_id)

    table = eventually(search, lambda done: f"{client_id} nightly backup" in done.stdout)
    assert table.returncode == 0 and "backup-bot" in table.stdout and "1 results" in table.stdout
    got = cli(api_url, api_key, "get", memory_id, "--json")
    assert json.loads(got.stdout)["client_id"] == client_id
    exported = tmp_path / "export.jsonl"
    assert cli(api_url, api_key, "export", str(exported), "--client", client_id).returncode == 0
    assert [json.loads(line)["id"] for line in exported.read_text().splitlines()] == [memory_id]
    again = cli(api_url, api_key, "import", str(exported), "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["skipped"] == 1, again.stdout + again.stderr
    stats = cli(api_url, api_key, "stats", "--json")
    assert json.loads(stats.stdout)["total_memories"] >= 1

    refused = cli(api_url, "not-a-key", "stats")
    assert refused.returncode != 0 and "40" in refused.stderr  # the 401/403 named, no traceback
    assert "Traceback" not in refused.stderr


def test_the_mcp_server(api_url: str, api_key: str) -> None:
    client_id = unique("mcp")
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "zengram.mcp_server"], cwd=str(REPO_ROOT),
        env={"BRAIN_API_URL": api_url, "BRAIN_API_KEY": api_key, "BRAIN_MCP_SOURCE_AGENT": "mcp-e2e",
             "PYTHONPATH": str(REPO_ROOT / "shared"), "PATH": os.environ.get("PATH", "")})

    async def scenario(session: ClientSession) -> dict[str, Any]:
        call = Recorder(session)
        seen: dict[str, Any] = {}
        seen["old"] = payload(await call("brain_store", {"type": "fact", "content": f"{client_id} staging runs on "
                                                         "Kubernetes 1.29", "key": "staging", "client_id": client_id}))
        seen["new"] = payload(await call("brain_store", {"type": "fact", "content": f"{client_id} staging runs on "
                                                         "Kubernetes 1.30", "key": "staging", "client_id": client_id}))
        for _ in range(120):
            seen["search"] = payload(await call("brain_search", {"query": "staging kubernetes",
                                                                 "client_id": client_id}))
            if seen["search"]["results"]:
                break
        seen["query"] = payload(await call("brain_query", {"type": "facts", "key": "staging",
                                                           "client_id": client_id}))
        seen["briefing"] = payload(await call("brain_briefing", {"since": "2000-01-01T00:00:00Z"}))
        seen["update"] = payload(await call("brain_update", {"memory_id": seen["new"]["id"], "importance": "high"}))
        seen["restore"] = payload(await call("brain_restore", {"memory_id": seen["old"]["id"]}))
        seen["delete"] = payload(await call("brain_delete", {"memory_id": seen["new"]["id"], "reason": "outdated"}))
        seen["export"] = payload(await call("brain_export", {"client_id": client_id, "active_only": False}))
        seen["import"] = payload(await call("brain_import", {"data": seen["export"]["memories"],
                                                             "operator_approved": True}))
        seen["stats"] = payload(await call("brain_stats", {}))
        seen["entity"] = payload(await call("brain_entities", {"action": "get", "name": client_id}))
        return seen

    async def run() -> dict[str, Any]:
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await scenario(session)

    import asyncio

    seen = asyncio.run(run())
    assert seen["new"]["supersedes"] == seen["old"]["id"]
    assert [hit["id"] for hit in seen["search"]["results"]] == [seen["new"]["id"]]
    assert seen["query"]["results"][0]["content"].endswith("Kubernetes 1.30")
    assert "summary" in seen["briefing"]
    assert seen["update"]["updated_fields"] == ["importance"]
    assert seen["restore"]["superseded"] == [seen["new"]["id"]]
    assert seen["delete"]["deleted_by"] == "mcp-e2e"
    assert seen["export"]["count"] == 2
    assert (seen["import"]["imported"], seen["import"]["skipped"]) == (0, 2)
    assert seen["stats"]["total_memories"] >= 2
    assert (seen["entity"]["name"], seen["entity"]["type"]) == (client_id, "client")
