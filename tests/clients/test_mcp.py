"""`zengram-mcp` started by the MCP SDK's own client, over stdio and over streamable HTTP, against a
running embedded server. Every tool is called; with the scripted LLM server the LLM tools answer for real."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent
from zengram.embedded.background import BackgroundServer

from tests.clients.conftest import EMPTY_PLAN, free_port
from tests.llm_server import ScriptedLLMServer
from tests.support import API_KEY, REPO_ROOT

DOCUMENT_TOOLS = {"brain_docs_query", "brain_docs_status", "brain_docs_chunk", "brain_docs_index", "brain_docs_jobs",
                  "brain_docs_folders", "brain_docs_cache"}  # each called in test_mcp_documents.py
TOOLS = {"brain_store", "brain_search", "brain_briefing", "brain_query", "brain_stats", "brain_consolidate",
         "brain_entities", "brain_delete", "brain_update", "brain_export", "brain_import", "brain_reclassify",
         "brain_reflect", "brain_research", "brain_restore"} | DOCUMENT_TOOLS

Call = Callable[..., Awaitable[CallToolResult]]


def mcp_env(server: BackgroundServer, **extra: str) -> dict[str, str]:
    """The MCP server's whole env (the SDK passes no other): PYTHONPATH too, so it runs the code under test."""
    inherited = {name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ}
    return {"BRAIN_API_URL": server.url, "BRAIN_API_KEY": API_KEY, "BRAIN_MCP_SOURCE_AGENT": "mcp-test",
            **inherited, **extra}


def with_mcp(server: BackgroundServer, scenario: Callable[[ClientSession], Awaitable[Any]], *,
             env: dict[str, str] | None = None, cwd: Path = REPO_ROOT) -> Any:
    parameters = StdioServerParameters(command=sys.executable, args=["-m", "zengram.mcp_server"], cwd=str(cwd),
                                       env=mcp_env(server) if env is None else env)

    async def run() -> Any:
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await scenario(session)

    return asyncio.run(run())


class Recorder:
    """`session.call_tool`, remembering which tools were called."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.called: set[str] = set()

    async def __call__(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        self.called.add(name)
        return await self.session.call_tool(name, arguments)


def index_sample_documents(server: BackgroundServer) -> None:
    """The document sample folder, indexed through /kb (the server allows the folder it runs in: the repo)."""
    headers = {"x-api-key": API_KEY}
    folder = str(REPO_ROOT / "tests" / "data" / "kb_sample")
    job = httpx.post(f"{server.url}/kb/index", json={"folder_path": folder}, headers=headers, timeout=30).json()
    deadline = time.monotonic() + 60
    while httpx.get(f"{server.url}/kb/index/jobs/{job['job_id']}", headers=headers).json()["status"] != "done":
        assert time.monotonic() < deadline, "indexing did not finish"
        time.sleep(0.1)


def text(result: CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


def payload(result: CallToolResult) -> Any:
    assert not result.is_error, text(result)
    return json.loads(text(result))


def test_lists_every_tool_with_its_argument_schema(live_server: BackgroundServer) -> None:
    async def scenario(session: ClientSession) -> dict[str, dict[str, Any]]:
        return {tool.name: tool.input_schema for tool in (await session.list_tools()).tools}

    schemas = with_mcp(live_server, scenario)

    assert set(schemas) == TOOLS
    assert schemas["brain_store"]["required"] == ["type", "content"]
    assert schemas["brain_store"]["properties"]["type"]["enum"] == ["event", "fact", "decision", "status"]
    assert schemas["brain_search"]["required"] == ["query"]
    assert set(schemas["brain_import"]["required"]) == {"data", "operator_approved"}
    assert schemas["brain_delete"]["required"] == ["memory_id"]


def test_every_tool_is_called_against_a_server_with_an_llm(
    llm_live_server: BackgroundServer, llm_server: ScriptedLLMServer
) -> None:
    async def scenario(session: ClientSession) -> tuple[set[str], dict[str, Any]]:
        call = Recorder(session)
        seen: dict[str, Any] = {}
        old = payload(await call("brain_store", {"type": "fact", "content": "Staging runs on Kubernetes 1.29",
                                                 "key": "staging-platform", "client_id": "acme"}))
        new = payload(await call("brain_store", {"type": "fact", "content": "Staging runs on Kubernetes 1.30",
                                                 "key": "staging-platform", "client_id": "acme"}))
        event = payload(await call("brain_store", {"type": "event", "client_id": "acme",
                                                   "content": "Acme moved its website to Next.js"}))
        seen["old"], seen["new"], seen["event"] = old, new, event
        seen["search"] = payload(await call("brain_search", {"query": "staging kubernetes", "client_id": "acme",
                                                             "type": "fact"}))
        seen["query"] = payload(await call("brain_query", {"type": "facts", "key": "staging-platform"}))
        seen["briefing"] = payload(await call("brain_briefing", {"since": "2000-01-01T00:00:00Z"}))
        seen["own"] = payload(await call("brain_briefing", {"since": "2000-01-01T00:00:00Z", "agent": "mcp-test"}))
        seen["update"] = payload(await call("brain_update", {"memory_id": new["id"], "importance": "high"}))
        seen["restore"] = payload(await call("brain_restore", {"memory_id": old["id"]}))
        seen["delete"] = payload(await call("brain_delete", {"memory_id": new["id"], "reason": "outdated"}))
        seen["export"] = payload(await call("brain_export", {"client_id": "acme", "active_only": False}))
        seen["import"] = payload(await call("brain_import", {"data": seen["export"]["memories"],
                                                             "operator_approved": True}))
        seen["stats"] = payload(await call("brain_stats", {}))
        seen["entity_stats"] = payload(await call("brain_entities", {"action": "stats"}))
        seen["entity_list"] = payload(await call("brain_entities", {"action": "list", "type": "technology"}))
        seen["entity"] = payload(await call("brain_entities", {"action": "get", "name": "nextjs"}))
        seen["entity_memories"] = payload(await call("brain_entities", {"action": "memories", "name": "Next.js"}))
        seen["other_tenant"] = payload(await call("brain_entities", {"action": "memories", "name": "Next.js",
                                                                     "client_id": "not-acme"}))

        llm_server.script({"summary": "Acme's site moved.", "patterns": [f"site on Next.js [mem:{event['id']}]"],
                           "timeline": [], "contradictions": [], "gaps": []})
        seen["reflect"] = payload(await call("brain_reflect", {"topic": "website", "client_id": "acme"}))
        llm_server.script({"draft": "Next.js", "status": "SUFFICIENT", "reason": "stated", "missing": []},
                          {"answer": f"Next.js [mem:{event['id']}]", "key_findings": [], "unresolved": []})
        seen["research"] = payload(await call("brain_research", {"topic": "what does acme's website run on?",
                                                                 "client_id": "acme", "max_iterations": 1}))
        llm_server.script(EMPTY_PLAN)  # one batch: every unconsolidated active memory is acme's
        seen["run"] = payload(await call("brain_consolidate", {"action": "run", "sync": True}))
        seen["job"] = payload(await call("brain_consolidate", {"action": "job", "job_id": seen["run"]["job_id"]}))
        seen["status"] = payload(await call("brain_consolidate", {"action": "status"}))

        seen["reclassify"] = payload(await call("brain_reclassify", {
            "reclassifications": [{"name": "Next.js", "new_type": "system"}], "dry_run": False}))
        seen["reclassified"] = payload(await call("brain_entities", {"action": "get", "name": "Next.js"}))
        seen["docs"] = payload(await call("brain_docs_query", {"query": "what calls compute_total", "mode": "graph",
                                                               "top_k": 2, "include_relationships": True}))
        return call.called, seen

    index_sample_documents(llm_live_server)
    called, seen = with_mcp(llm_live_server, scenario)

    assert called == TOOLS - DOCUMENT_TOOLS | {"brain_docs_query"}
    assert seen["new"]["supersedes"] == seen["old"]["id"]
    assert [hit["id"] for hit in seen["search"]["results"]] == [seen["new"]["id"]]
    assert seen["query"]["results"][0]["content"] == "Staging runs on Kubernetes 1.30"
    assert seen["briefing"]["summary"]["total_entries"] == 2  # the superseded fact is not news
    assert seen["own"]["summary"]["total_entries"] == 0  # the agent's own entries are left out
    assert seen["update"]["updated_fields"] == ["importance"]
    assert seen["restore"]["superseded"] == [seen["new"]["id"]]
    assert seen["delete"]["deleted_by"] == "mcp-test"
    assert seen["export"]["count"] == 3
    assert (seen["import"]["imported"], seen["import"]["skipped"]) == (0, 3)
    assert (seen["stats"]["total_memories"], seen["stats"]["active"], seen["stats"]["deleted"]) == (2, 2, 1)
    assert seen["entity_stats"]["by_type"]["technology"] >= 1
    assert "Next.js" in [entity["name"] for entity in seen["entity_list"]["entities"]]
    assert (seen["entity"]["name"], seen["entity"]["type"]) == ("Next.js", "technology")
    assert [memory["id"] for memory in seen["entity_memories"]["memories"]] == [seen["event"]["id"]]
    assert seen["other_tenant"]["memories"] == []
    assert seen["reflect"]["cited_memory_ids"] == [seen["event"]["id"]]
    assert seen["reflect"]["reflection"]["summary"] == "Acme's site moved."
    assert seen["research"]["cited_memory_ids"] == [seen["event"]["id"]] and seen["research"]["partial"] is False
    assert seen["run"]["status"] == "succeeded" and seen["run"]["result"]["batches"] == 1
    assert seen["job"]["job_id"] == seen["run"]["job_id"] and seen["job"]["status"] == "succeeded"
    assert seen["status"]["is_running"] is False and seen["status"]["last_run_at"]
    assert seen["reclassify"]["applied"][0]["old_type"] == "technology" and not seen["reclassify"]["dry_run"]
    assert seen["reclassified"]["type"] == "system"
    assert llm_server.pending == 0 and len(llm_server.requests) == 4  # reflect 1, research 2, consolidation 1
    callers = seen["docs"]["results"]
    assert {result["metadata"]["symbol"] for result in callers} == {"Invoice", "MonthlyReport"}
    assert all(result["graph_score"] >= 0.9 and result["relationships"] for result in callers)


def test_without_an_llm_the_llm_tools_pass_on_the_documented_503(live_server: BackgroundServer) -> None:
    async def scenario(session: ClientSession) -> dict[str, CallToolResult]:
        call: Call = session.call_tool
        await call("brain_store", {"type": "event", "content": "Acme moved its website to Next.js"})
        return {
            "consolidate": await call("brain_consolidate", {}),
            "status": await call("brain_consolidate", {"action": "status"}),
            "reflect": await call("brain_reflect", {"topic": "websites"}),
            "research": await call("brain_research", {"topic": "what did acme move its website to?"}),
        }

    results = with_mcp(live_server, scenario)

    assert results["consolidate"].is_error and "HTTP 503: LLM provider unavailable" in text(results["consolidate"])
    assert payload(results["status"])["is_running"] is False
    assert results["reflect"].is_error and "HTTP 503: LLM provider unavailable" in text(results["reflect"])
    assert results["research"].is_error and "RESEARCH_ENABLED" in text(results["research"])


def test_invalid_arguments_are_tool_errors_that_name_them_and_nothing_is_sent(
    live_server: BackgroundServer,
) -> None:
    async def scenario(session: ClientSession) -> dict[str, CallToolResult]:
        call: Call = session.call_tool
        return {
            "type": await call("brain_store", {"type": "memo", "content": "x"}),
            "too_long": await call("brain_store", {"type": "event", "content": "x" * 10_001}),
            "key_on_event": await call("brain_store", {"type": "event", "content": "x", "key": "k"}),
            "limit": await call("brain_search", {"query": "x", "limit": 1000}),
            "empty_update": await call("brain_update", {"memory_id": "abc"}),
            "unapproved": await call("brain_import", {"data": [], "operator_approved": False}),
            "no_name": await call("brain_entities", {"action": "get"}),
            "memories_limit": await call("brain_entities", {"action": "memories", "name": "x", "limit": 101}),
            "reason": await call("brain_delete", {"memory_id": "abc", "reason": "r" * 1001}),
            "since": await call("brain_export", {"since": "last tuesday"}),
            "export_client": await call("brain_export", {"client_id": "not a slug!"}),
            "entity_client": await call("brain_entities", {"action": "memories", "name": "x", "client_id": "a b"}),
            "reclassify": await call("brain_reclassify", {"reclassifications": [
                {"name": f"e{n}", "new_type": "system"} for n in range(101)]}),
            "loose_dry_run": await call("brain_reclassify", {"reclassifications": [
                {"name": "Postgres", "new_type": "system"}], "dry_run": "false"}),
            "loose_approval": await call("brain_import", {"data": [], "operator_approved": "yes"}),
            "topic": await call("brain_reflect", {"topic": "t" * 501}),
            "blank_topic": await call("brain_research", {"topic": "   "}),
            "job": await call("brain_consolidate", {"action": "job"}),
            "missing": await call("brain_delete", {"memory_id": "no-such-memory"}),
            "after": await call("brain_query", {"type": "events"}),
        }

    results = with_mcp(live_server, scenario)

    for name, expected in (("type", "type"), ("too_long", "content"), ("key_on_event", "key:"),
                           ("limit", "limit"), ("empty_update", "at least one"),
                           ("unapproved", "operator_approved"), ("no_name", "name:"),
                           ("memories_limit", "limit:"), ("reason", "reason"), ("since", "since:"),
                           ("export_client", "client_id:"), ("entity_client", "client_id"),
                           ("reclassify", "reclassifications:"), ("loose_dry_run", "dry_run"),
                           ("loose_approval", "operator_approved"),
                           ("topic", "topic:"), ("blank_topic", "topic:"), ("job", "job_id:")):
        assert results[name].is_error, name
        assert expected in text(results[name]), (name, text(results[name]))
        assert "HTTP " not in text(results[name]), (name, "refused before any request")
    assert results["missing"].is_error and "HTTP 404" in text(results["missing"])
    assert payload(results["after"])["count"] == 0  # none of the refused calls stored anything


def test_finds_the_local_key_file_like_the_readme_config(live_server: BackgroundServer, tmp_path: Path) -> None:
    """The .mcp.json of docs/clients.md gives only BRAIN_API_URL: started in the project folder, the key comes from
    `.zengram/api-key`."""
    (tmp_path / ".zengram").mkdir()
    (tmp_path / ".zengram" / "api-key").write_text(API_KEY + "\n")

    async def scenario(session: ClientSession) -> Any:
        return payload(await session.call_tool("brain_stats", {}))

    stats = with_mcp(live_server, scenario, cwd=tmp_path,
                     env={"BRAIN_API_URL": live_server.url, "BRAIN_MCP_SOURCE_AGENT": "claude-code"})

    assert stats["total_memories"] == 0


@contextmanager
def streamable_http_mcp(server: BackgroundServer) -> Iterator[str]:
    """`zengram-mcp --transport streamable-http --port N` as a subprocess; yields its /mcp URL."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "zengram.mcp_server", "--transport", "streamable-http", "--port", str(port)],
        cwd=REPO_ROOT, env={**os.environ, **mcp_env(server)}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60  # bounds a hung start; nothing asserts on time
        while True:
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else "exited"
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline, "zengram-mcp did not start listening"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_streamable_http_transport_lists_and_calls_tools(live_server: BackgroundServer) -> None:
    async def scenario(url: str) -> tuple[set[str], Any, Any, CallToolResult]:
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = {tool.name for tool in (await session.list_tools()).tools}
            stored = payload(await session.call_tool("brain_store", {"type": "decision", "client_id": "acme",
                                                                     "content": "We ship on Tuesdays only"}))
            found = payload(await session.call_tool("brain_search", {"query": "when do we ship"}))
            wrong = await session.call_tool("brain_search", {"query": "x", "limit": 0})
            return names, stored, found, wrong

    with streamable_http_mcp(live_server) as url:
        names, stored, found, wrong = asyncio.run(scenario(url))

    assert names == TOOLS
    assert [hit["id"] for hit in found["results"]] == [stored["id"]]
    assert wrong.is_error and "limit" in text(wrong)


def test_without_a_key_it_serves_and_every_call_says_where_the_key_was_looked_for(
    live_server: BackgroundServer, tmp_path: Path
) -> None:
    """Exiting at start-up showed the assistant only "Connection closed" (issue 37): the server starts, lists its
    tools, and each call fails with the places the key was looked for."""
    data_dir = tmp_path / "data"

    async def scenario(session: ClientSession) -> tuple[set[str], dict[str, CallToolResult]]:
        names = {tool.name for tool in (await session.list_tools()).tools}
        return names, {"stats": await session.call_tool("brain_stats", {}),
                       "store": await session.call_tool("brain_store", {"type": "fact", "content": "x", "key": "k"}),
                       "search": await session.call_tool("brain_search", {"query": "anything"}),
                       "docs_jobs": await session.call_tool("brain_docs_jobs", {"action": "wait", "job_id": "j"})}

    names, results = with_mcp(live_server, scenario, cwd=tmp_path,
                              env={"BRAIN_API_URL": live_server.url, "ZENGRAM_DATA_DIR": str(data_dir),
                                   **{name: os.environ[name] for name in ("PATH", "PYTHONPATH") if name in os.environ}})

    assert names == TOOLS
    for name, result in results.items():
        assert result.is_error, name
        assert "BRAIN_API_KEY" in text(result) and str(data_dir / "api-key") in text(result), text(result)
