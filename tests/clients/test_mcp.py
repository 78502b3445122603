"""`zengram-mcp` started over stdio by the MCP SDK's own client, against a running embedded server."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent
from zengram.embedded.background import BackgroundServer

from tests.support import API_KEY, REPO_ROOT

TOOLS = {"brain_store", "brain_search", "brain_briefing", "brain_query", "brain_stats", "brain_consolidate",
         "brain_entities", "brain_delete", "brain_update", "brain_export", "brain_import", "brain_reclassify",
         "brain_reflect", "brain_research", "brain_restore"}

Call = Callable[..., Awaitable[CallToolResult]]


def with_mcp(server: BackgroundServer, scenario: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "zengram.mcp_server"], cwd=str(REPO_ROOT),
        env={"BRAIN_API_URL": server.url, "BRAIN_API_KEY": API_KEY, "BRAIN_MCP_SOURCE_AGENT": "mcp-test"},
    )

    async def run() -> Any:
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await scenario(session)

    return asyncio.run(run())


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


def test_memory_tools_against_the_server(live_server: BackgroundServer) -> None:
    async def scenario(session: ClientSession) -> dict[str, Any]:
        call: Call = session.call_tool
        seen: dict[str, Any] = {}
        old = payload(await call("brain_store", {"type": "fact", "content": "Staging runs on Kubernetes 1.29",
                                                 "key": "staging-platform", "client_id": "acme"}))
        new = payload(await call("brain_store", {"type": "fact", "content": "Staging runs on Kubernetes 1.30",
                                                 "key": "staging-platform", "client_id": "acme"}))
        seen["new"], seen["old"] = new, old
        seen["search"] = payload(await call("brain_search", {"query": "staging kubernetes", "client_id": "acme"}))
        seen["query"] = payload(await call("brain_query", {"type": "facts", "key": "staging-platform"}))
        seen["briefing"] = payload(await call("brain_briefing", {"since": "2000-01-01T00:00:00Z"}))
        seen["own"] = payload(await call("brain_briefing", {"since": "2000-01-01T00:00:00Z", "agent": "mcp-test"}))
        seen["update"] = payload(await call("brain_update", {"memory_id": new["id"], "importance": "high"}))
        seen["restore"] = payload(await call("brain_restore", {"memory_id": old["id"]}))
        seen["delete"] = payload(await call("brain_delete", {"memory_id": new["id"], "reason": "outdated"}))
        seen["export"] = payload(await call("brain_export", {"client_id": "acme", "active_only": False}))
        seen["import"] = payload(await call("brain_import", {"data": seen["export"]["data"],
                                                             "operator_approved": True}))
        return seen

    seen = with_mcp(live_server, scenario)

    assert seen["new"]["supersedes"] == seen["old"]["id"]
    assert [hit["id"] for hit in seen["search"]["results"]] == [seen["new"]["id"]]
    assert seen["query"]["results"][0]["content"] == "Staging runs on Kubernetes 1.30"
    assert seen["briefing"]["summary"]["total"] == 1  # the superseded fact is not news
    assert seen["own"]["summary"]["total"] == 0  # the agent's own entries are left out
    assert seen["update"]["updated_fields"] == ["importance"]
    assert seen["restore"]["superseded"] == [seen["new"]["id"]]
    assert seen["delete"]["deleted_by"] == "mcp-test"
    assert seen["export"]["count"] == 2
    assert (seen["import"]["imported"], seen["import"]["skipped"]) == (0, 2)


def test_knowledge_and_llm_tools_reach_their_endpoints(live_server: BackgroundServer) -> None:
    """Needs /stats, /entities*, /consolidate*, /reflect and /research on the server."""

    async def scenario(session: ClientSession) -> dict[str, CallToolResult]:
        call: Call = session.call_tool
        await call("brain_store", {"type": "event", "content": "Acme moved its website to Next.js"})
        return {
            "stats": await call("brain_stats", {}),
            "entities": await call("brain_entities", {"action": "stats"}),
            "entity_list": await call("brain_entities", {"action": "list"}),
            "reclassify": await call("brain_reclassify", {"reclassifications": [{"name": "Next.js",
                                                                                 "new_type": "technology"}]}),
            "consolidate": await call("brain_consolidate", {"action": "status"}),
            "reflect": await call("brain_reflect", {"topic": "websites"}),
            "research": await call("brain_research", {"topic": "what did acme move its website to?"}),
        }

    results = with_mcp(live_server, scenario)

    assert payload(results["stats"])["total_memories"] == 1
    assert isinstance(payload(results["entities"]), dict)
    assert isinstance(payload(results["entity_list"]), dict)
    assert isinstance(payload(results["reclassify"]), dict)
    assert "is_running" in payload(results["consolidate"])
    # No LLM is configured and research is off: the tools pass the server's 503 on, with its reason.
    assert results["reflect"].is_error and "HTTP 503" in text(results["reflect"])
    assert results["research"].is_error and "HTTP 503" in text(results["research"])


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
            "missing": await call("brain_delete", {"memory_id": "no-such-memory"}),
            "after": await call("brain_query", {"type": "events"}),
        }

    results = with_mcp(live_server, scenario)

    for name, expected in (("type", "type"), ("too_long", "content"), ("key_on_event", "key:"),
                           ("limit", "limit"), ("empty_update", "at least one"),
                           ("unapproved", "operator_approved"), ("no_name", "name:"),
                           ("missing", "HTTP 404")):
        assert results[name].is_error, name
        assert expected in text(results[name]), (name, text(results[name]))
    assert payload(results["after"])["count"] == 0  # none of the refused calls stored anything
