"""Zengram's MCP tools (names and argument names as Zengram's own MCP server has them), each a thin
wrapper over one SDK call. Arguments are validated twice before any request: by the tool's JSON schema
(types, enums, ranges) and by the server's own request models (lengths, patterns, field combinations), so
a wrong argument comes back as a tool error that names it, and nothing is sent."""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field, StrictBool

from zengram.client import AsyncBrainClient
from zengram.client.calls import BriefingOptions, QueryOptions, SearchOptions, StoreOptions, UpdateOptions
from zengram.mcp_server.common import DESTRUCTIVE, READ, WRITE, answer, checked
from zengram.mcp_server.document_tools import document_tools
from zengram.memory.domain.entities import EntityListRequest, EntityMemoriesRequest, ReclassifyRequest
from zengram.memory.domain.reflect import ReflectRequest
from zengram.memory.domain.requests import (
    CLIENT_PATTERN,
    BriefingRequest,
    DeleteRequest,
    ExportRequest,
    MemoryDraft,
    MemoryPatch,
    SearchRequest,
    StructuredQuery,
)
from zengram.memory.domain.research import ResearchRequest

DEFAULT_AGENT = "claude-code"  # Zengram's MCP default identity
DEFAULT_EXPORT_LIMIT = 500  # keeps one answer within MCP message sizes

MemoryTypeName = Literal["event", "fact", "decision", "status"]
Importance = Literal["critical", "high", "medium", "low"]
KnowledgeCategory = Literal["brand", "strategy", "meeting", "content", "technical", "relationship", "general"]
CategoryName = Literal["semantic", "episodic", "procedural"]
EntityType = Literal["client", "person", "system", "service", "domain", "technology", "workflow", "agent"]
MemoryId = Annotated[str, Field(min_length=1, max_length=128, description="The memory's id (UUID)")]
ClientIdArg = Annotated[str | None, Field(description="Client slug (e.g. \"acme-corp\") or \"global\"")]
IsoTime = Annotated[str | None, Field(description="ISO 8601 timestamp, e.g. 2026-03-28T00:00:00Z")]



class Reclassification(BaseModel):
    name: Annotated[str, Field(min_length=1, description="Entity name (canonical or alias)")]
    new_type: EntityType


def build_server(client: AsyncBrainClient, *, source_agent: str | None = None) -> MCPServer:
    from zengram import __version__

    server = MCPServer("zengram", version=__version__, log_level="WARNING", instructions=(
        "Shared long-term memory for AI agents. Start a session with brain_briefing, look things up with "
        "brain_search (meaning) or brain_query (exact key/subject), record what you learn with brain_store."))
    agent = source_agent or os.environ.get("BRAIN_MCP_SOURCE_AGENT", "").strip() or DEFAULT_AGENT
    _memory_tools(server, client, agent)
    _knowledge_tools(server, client)
    _llm_tools(server, client)
    document_tools(server, client)
    return server


def _memory_tools(server: MCPServer, client: AsyncBrainClient, agent: str) -> None:
    @server.tool(annotations=WRITE)
    async def brain_store(
        type: Annotated[MemoryTypeName, Field(description="event=something happened, fact=persistent knowledge "
                                                          "(upsert by key), decision=choice and why, "
                                                          "status=current state (by subject)")],
        content: Annotated[str, Field(min_length=1, description="The memory text; be specific")],
        source_agent: Annotated[str | None, Field(description="Who stores it (default: BRAIN_MCP_SOURCE_AGENT, "
                                                              "then claude-code)")] = None,
        client_id: ClientIdArg = None,
        category: CategoryName | None = None,
        importance: Importance | None = None,
        key: Annotated[str | None, Field(description="Facts only: a newer fact with this key supersedes")] = None,
        subject: Annotated[str | None, Field(description="Statuses only: what the status is about")] = None,
        status_value: Annotated[str | None, Field(description="Statuses only: the current value")] = None,
        knowledge_category: KnowledgeCategory | None = None,
        valid_from: IsoTime = None,
        valid_to: IsoTime = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="Extra data (max 10KB, 3 levels)")] = None,
    ) -> str:
        """Store a memory in the shared brain: events, facts, decisions or statuses. Duplicates are detected;
        a fact with an existing key (or status with an existing subject) supersedes the older one."""
        body = StoreOptions(client_id=client_id, category=category, importance=importance, key=key,
                            subject=subject, status_value=status_value, knowledge_category=knowledge_category,
                            valid_from=valid_from, valid_to=valid_to, metadata=metadata)
        checked(MemoryDraft, {"type": type, "content": content, "source_agent": source_agent or agent, **body})
        return await answer(client.store(type, content, source_agent or agent, **body))

    @server.tool(annotations=READ)
    async def brain_search(
        query: Annotated[str, Field(min_length=1, description="Natural-language search query")],
        type: MemoryTypeName | None = None,
        source_agent: str | None = None,
        client_id: ClientIdArg = None,
        category: CategoryName | None = None,
        limit: Annotated[int | None, Field(ge=1, le=100, description="Max results (default 10)")] = None,
        format: Annotated[Literal["compact", "full", "index"] | None, Field(
            description="compact (default, 200 chars), full (whole records + retrieval sources), "
                        "index (id, score, preview)")] = None,
        include_superseded: bool | None = None,
        knowledge_category: KnowledgeCategory | None = None,
        entity: Annotated[str | None, Field(description="Only memories mentioning this entity")] = None,
        at_time: Annotated[str | None, Field(description="ISO 8601: what was true at that moment")] = None,
        date_from: Annotated[str | None, Field(description="ISO 8601: only what happened at or after")] = None,
        date_to: Annotated[str | None, Field(description="ISO 8601: only what happened at or before")] = None,
        reference_date: Annotated[str | None, Field(
            description="ISO 8601: the 'now' that 'yesterday' or 'last week' in the query mean")] = None,
    ) -> str:
        """Search all shared memories by meaning and keywords (vector + BM25, fused). Compact by default."""
        options = SearchOptions(type=type, source_agent=source_agent, client_id=client_id, category=category,
                                limit=limit, format=format or "compact", include_superseded=include_superseded,
                                knowledge_category=knowledge_category, entity=entity, at_time=at_time,
                                date_from=date_from, date_to=date_to, reference_date=reference_date)
        checked(SearchRequest, {"q": query, **options})
        return await answer(client.search(query, **options))

    @server.tool(annotations=READ)
    async def brain_query(
        type: Annotated[Literal["events", "facts", "decisions", "statuses"], Field(description="What to query")],
        source_agent: str | None = None,
        category: CategoryName | None = None,
        client_id: ClientIdArg = None,
        since: Annotated[str | None, Field(description="For events: ISO 8601 timestamp")] = None,
        key: Annotated[str | None, Field(description="For facts: the exact key")] = None,
        subject: Annotated[str | None, Field(description="For statuses: the exact subject")] = None,
        include_superseded: bool | None = None,
        limit: Annotated[int | None, Field(ge=1, le=500)] = None,
        offset: Annotated[int | None, Field(ge=0)] = None,
    ) -> str:
        """Exact database lookup, newest first: facts by key, statuses by subject, events since a time."""
        options = QueryOptions(source_agent=source_agent, category=category, client_id=client_id, since=since,
                               key=key, subject=subject, include_superseded=include_superseded, limit=limit,
                               offset=offset)
        checked(StructuredQuery, {"type": type, **options})
        return await answer(client.query(type, **options))

    @server.tool(annotations=DESTRUCTIVE)
    async def brain_delete(
        memory_id: MemoryId,
        reason: Annotated[str | None, Field(max_length=1000, description="Why (kept for audit)")] = None,
    ) -> str:
        """Soft-delete a memory: it stays stored but leaves search at once."""
        checked(DeleteRequest, {"reason": reason, "source_agent": agent})
        return await answer(client.delete(memory_id, reason=reason, source_agent=agent))

    @server.tool(annotations=WRITE)
    async def brain_update(
        memory_id: MemoryId,
        content: Annotated[str | None, Field(description="New text (re-embedded and re-indexed)")] = None,
        importance: Importance | None = None,
        knowledge_category: KnowledgeCategory | None = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="Replaces the metadata")] = None,
    ) -> str:
        """Update a memory in place (give at least one of content, importance, knowledge_category, metadata)."""
        fields = UpdateOptions(content=content, importance=importance, knowledge_category=knowledge_category,
                               metadata=metadata)
        checked(MemoryPatch, fields)
        return await answer(client.update(memory_id, **fields))

    @server.tool(annotations=WRITE)
    async def brain_restore(memory_id: MemoryId) -> str:
        """Make a superseded memory active again; whatever holds its key or subject now is superseded."""
        return await answer(client.restore(memory_id))


def _knowledge_tools(server: MCPServer, client: AsyncBrainClient) -> None:
    @server.tool(annotations=READ)
    async def brain_briefing(
        since: Annotated[str, Field(min_length=1, description="ISO 8601, e.g. 2026-03-09T00:00:00Z")],
        agent: Annotated[str | None, Field(description="You: your own entries are left out "
                                                       "(default: nobody's are)")] = None,
        include: Annotated[Literal["all"] | None, Field(description="\"all\" keeps your own entries")] = None,
        client_id: ClientIdArg = None,
        format: Annotated[Literal["compact", "summary", "full"] | None, Field(
            description="compact (default), summary (headlines) or full")] = None,
        limit: Annotated[int | None, Field(ge=1, le=500, description="Max memories (default 100)")] = None,
    ) -> str:
        """What happened since a moment across all agents: events, facts, statuses and decisions."""
        options = BriefingOptions(agent=agent, include=include, client_id=client_id,
                                  format=format or "compact", limit=limit)
        checked(BriefingRequest, {"since": since, **options})
        return await answer(client.briefing(since, **options))

    @server.tool(annotations=READ)
    async def brain_stats() -> str:
        """Memory health: totals, active vs superseded, consolidated, decayed, by type, entities."""
        return await answer(client.stats())

    @server.tool(annotations=READ)
    async def brain_entities(
        action: Annotated[Literal["list", "get", "memories", "stats"], Field(
            description="list=entities, get=one entity, memories=memories linked to one, stats=counts")],
        name: Annotated[str | None, Field(description="For get/memories: name or alias")] = None,
        type: Annotated[EntityType | None, Field(description="For list: only this type")] = None,
        limit: Annotated[int | None, Field(ge=1, le=500, description="Max results (default 50)")] = None,
        client_id: Annotated[str | None, Field(pattern=CLIENT_PATTERN, description="For memories: only this client's")]
        = None,
    ) -> str:
        """Query the entity graph: clients, people, technologies... extracted from memories."""
        if action in ("get", "memories") and not name:
            raise ToolError(f"name: required for action={action}")
        if action == "list":
            checked(EntityListRequest, {"type": type, "limit": limit})
        elif action == "memories":
            checked(EntityMemoriesRequest, {"limit": limit})
        return await answer(client.entities(action, name=name, type=type, limit=limit, client_id=client_id))

    @server.tool(annotations=WRITE)
    async def brain_reclassify(
        reclassifications: Annotated[list[Reclassification], Field(
            min_length=1, description='e.g. [{"name": "Baserow", "new_type": "technology"}]')],
        dry_run: Annotated[StrictBool, Field(description="Preview only (default true); false applies")] = True,
        action: Annotated[Literal["apply"], Field(description="Only apply exists (suggestions were removed)")]
        = "apply",
    ) -> str:
        """Fix entity types. Run with dry_run=true first, then false to apply."""
        items = [item.model_dump() for item in reclassifications]
        checked(ReclassifyRequest, {"reclassifications": items, "dry_run": dry_run})
        return await answer(client.reclassify(items, dry_run=dry_run))

    @server.tool(annotations=READ)
    async def brain_export(
        client_id: ClientIdArg = None,
        type: MemoryTypeName | None = None,
        since: IsoTime = None,
        limit: Annotated[int, Field(ge=1, le=5000, description="Max records (default 500)")] = DEFAULT_EXPORT_LIMIT,
        offset: Annotated[int | None, Field(ge=0, description="Skip the first N (paging)")] = None,
        active_only: Annotated[bool | None, Field(description="false adds superseded and deleted ones")] = None,
    ) -> str:
        """Export whole memories as JSON (backups, migration). Page with limit/offset on big stores."""
        checked(ExportRequest, {"client_id": client_id, "type": type, "since": since, "limit": limit,
                                "offset": offset, "active_only": active_only})
        return await answer(client.export(client_id=client_id, type=type, since=since, limit=limit, offset=offset,
                                          active_only=active_only))

    @server.tool(annotations=DESTRUCTIVE)
    async def brain_import(
        data: Annotated[list[dict[str, Any]], Field(max_length=500, description="Memory records, as brain_export "
                                                                                "returns them (max 500)")],
        operator_approved: Annotated[StrictBool, Field(
            description="Must be true: the operator authorised this import")],
    ) -> str:
        """Operator-only: import memories (e.g. a brain_export backup). Existing ids are skipped."""
        if operator_approved is not True:
            raise ToolError("operator_approved: must be true -- import writes live memories and needs the "
                            "operator's explicit authorisation")
        return await answer(client.import_(data, operator_approved=True))


def _llm_tools(server: MCPServer, client: AsyncBrainClient) -> None:
    @server.tool(annotations=WRITE)
    async def brain_consolidate(
        action: Annotated[Literal["run", "status", "job"], Field(
            description="run (default; async, returns a job_id), status, job (poll job_id)")] = "run",
        job_id: Annotated[str | None, Field(description="For action=job")] = None,
        sync: Annotated[bool, Field(description="For action=run: wait until it is done")] = False,
    ) -> str:
        """Run the consolidation engine (merge duplicates, flag contradictions, link memories) or check it."""
        if action == "job":
            if not job_id:
                raise ToolError("job_id: required for action=job")
            return await answer(client.consolidation_job(job_id))
        if action == "status":
            return await answer(client.consolidation_status())
        return await answer(client.consolidate(sync=sync))

    @server.tool(annotations=READ)
    async def brain_reflect(
        topic: Annotated[str, Field(min_length=1, description="Topic or question to reflect on")],
        client_id: ClientIdArg = None,
        limit: Annotated[int | None, Field(ge=1, le=50, description="Memories to analyse (default 20)")] = None,
    ) -> str:
        """LLM synthesis over the memories about a topic: patterns, timeline, contradictions, gaps."""
        checked(ReflectRequest, {"topic": topic, "client_id": client_id, "limit": limit})
        return await answer(client.reflect(topic, client_id=client_id, limit=limit))

    @server.tool(annotations=READ)
    async def brain_research(
        topic: Annotated[str, Field(min_length=1, description="The whole multi-hop question")],
        client_id: ClientIdArg = None,
        max_iterations: Annotated[int | None, Field(ge=1, le=4, description="Retrieval rounds (default 2)")]
        = None,
    ) -> str:
        """Agentic multi-hop retrieval for HARD questions only (several LLM calls; the server must set
        RESEARCH_ENABLED=true). Use brain_search for routine recall."""
        checked(ResearchRequest, {"topic": topic, "client_id": client_id, "max_iterations": max_iterations})
        return await answer(client.research(topic, client_id=client_id, max_iterations=max_iterations))
