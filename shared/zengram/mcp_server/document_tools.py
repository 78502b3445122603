"""The document-base tools of `zengram-mcp`: what Agent Brain's own MCP server (agent-brain-mcp, not on PyPI)
offers as far as it talks to the server, each a thin wrapper over one `/kb` call of the SDK. Agent Brain's
tool names map as: search_documents -> brain_docs_query; server_health, query_count -> brain_docs_status;
index_folder, add_documents -> brain_docs_index; list_jobs, get_job, cancel_job, wait_for_job -> brain_docs_jobs;
list_folders, remove_folder -> brain_docs_folders; explain_result -> brain_docs_chunk (the chunk itself);
cache_status, clear_cache -> brain_docs_cache. list_file_types and inject_documents are not offered: the first is
a table inside the MCP server (no server call), the second's injector scripts are refused by this server."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, StrictBool

from zengram.client import AsyncBrainClient, BrainError
from zengram.documents.api.schemas import IndexRequest
from zengram.documents.domain.query import DocumentQuery
from zengram.mcp_server.common import DESTRUCTIVE, READ, WRITE, answer, checked

FINISHED = ("done", "failed", "cancelled")  # a job in one of these will not change any more
WAIT_POLL_SECONDS = 0.25

JobId = Annotated[str | None, Field(min_length=1, max_length=128, description="For get/cancel/wait: the job's id")]
FolderPath = Annotated[str, Field(min_length=1, max_length=4096, description="Folder as the server sees it "
                                                                             "(absolute, or relative to where it "
                                                                             "runs)")]


def document_tools(server: MCPServer, client: AsyncBrainClient) -> None:
    _query_tools(server, client)
    _index_tools(server, client)


def _query_tools(server: MCPServer, client: AsyncBrainClient) -> None:
    @server.tool(annotations=READ)
    async def brain_docs_query(
        query: Annotated[str, Field(min_length=1, max_length=1000, description="What to look for")],
        mode: Annotated[Literal["vector", "bm25", "hybrid", "graph", "multi"], Field(
            description="hybrid (default): meaning and keywords; graph: code relations of the names the query "
                        "mentions (\"what calls compute_total\"); multi: vector, BM25 and graph fused")] = "hybrid",
        top_k: Annotated[int, Field(ge=1, le=100, description="Results (default 5)")] = 5,
        similarity_threshold: Annotated[float, Field(ge=0, le=1, description="Least vector similarity "
                                                                             "(default 0.3)")] = 0.3,
        alpha: Annotated[float | None, Field(ge=0, le=1, description="Hybrid: 1 vector only, 0 BM25 only")] = None,
        traversal_depth: Annotated[int | None, Field(ge=1, le=5, description="Graph hops (default 2)")] = None,
        include_relationships: Annotated[bool, Field(description="Add each code result's relations")] = False,
        source_types: Annotated[list[Literal["doc", "code", "test"]] | None, Field(
            description="Only these kinds of sources")] = None,
        languages: Annotated[list[str] | None, Field(description="Only these languages (python, typescript…)")]
        = None,
        file_paths: Annotated[list[str] | None, Field(description="Only sources matching these globs")] = None,
    ) -> str:
        """Search the indexed documents and code (the document knowledge base under /kb: folders indexed with
        brain_docs_index, `zengram kb index` or POST /kb/index). Answers chunks with their source file, section or
        symbol."""
        fields: dict[str, Any] = {"mode": mode, "top_k": top_k, "similarity_threshold": similarity_threshold,
                                  "alpha": alpha, "traversal_depth": traversal_depth,
                                  "include_relationships": include_relationships, "source_types": source_types,
                                  "languages": languages, "file_paths": file_paths}
        checked(DocumentQuery, {"query": query, **fields})
        return await answer(client.docs_query(query, **{name: value for name, value in fields.items()
                                                         if value is not None}))

    @server.tool(annotations=READ)
    async def brain_docs_status() -> str:
        """The document base's state: indexed documents and chunks, folders, whether a job is running."""
        return await answer(client.docs_status())

    @server.tool(annotations=READ)
    async def brain_docs_chunk(
        chunk_id: Annotated[str, Field(min_length=1, max_length=256, description="A chunk_id brain_docs_query "
                                                                                 "answered")],
    ) -> str:
        """One indexed chunk by id: its whole text, source and metadata (to read more of a search result)."""
        return await answer(client.docs_chunk(chunk_id))


def _index_tools(server: MCPServer, client: AsyncBrainClient) -> None:
    @server.tool(annotations=WRITE)
    async def brain_docs_index(
        folder_path: FolderPath,
        add: Annotated[bool, Field(description="Add to the folder's index (POST /kb/index/add) instead of "
                                               "re-indexing it")] = False,
        include_code: Annotated[bool | None, Field(description="Index source code too (default true)")] = None,
        chunk_size: Annotated[int | None, Field(ge=32, le=8192, description="Tokens per chunk (default 512)")]
        = None,
        chunk_overlap: Annotated[int | None, Field(ge=0, le=2048, description="Overlap (default 50)")] = None,
        include_patterns: Annotated[list[str] | None, Field(description="Only files matching these globs")] = None,
        exclude_patterns: Annotated[list[str] | None, Field(description="Skip files matching these globs")] = None,
        force: Annotated[bool, Field(description="Re-chunk and re-embed unchanged files too")] = False,
        watch_mode: Annotated[Literal["off", "auto"] | None, Field(
            description="auto: re-index when files under the folder change")] = None,
    ) -> str:
        """Queue a folder for indexing; answers a job_id to follow with brain_docs_jobs (action=wait)."""
        fields = {name: value for name, value in {
            "include_code": include_code, "chunk_size": chunk_size, "chunk_overlap": chunk_overlap,
            "include_patterns": include_patterns, "exclude_patterns": exclude_patterns, "force": force,
            "watch_mode": watch_mode}.items() if value is not None}
        checked(IndexRequest, {"folder_path": folder_path, **fields})
        return await answer(client.docs_index(folder_path, add=add, **fields))

    @server.tool(annotations=WRITE)
    async def brain_docs_jobs(
        action: Annotated[Literal["list", "get", "cancel", "wait"], Field(
            description="list (newest first), get one, cancel one, wait until one finishes")] = "list",
        job_id: JobId = None,
        limit: Annotated[int | None, Field(ge=1, le=100, description="For list (default 50)")] = None,
        timeout_seconds: Annotated[float, Field(gt=0, le=600, description="For wait: give up after (default 60)")]
        = 60,
    ) -> str:
        """Indexing jobs: list them, look one up, cancel one, or wait for one to finish."""
        if action == "list":
            return await answer(client.docs_jobs(limit=limit))
        if not job_id:
            raise ToolError(f"job_id: required for action={action}")
        if action == "cancel":
            return await answer(client.docs_cancel_job(job_id))
        if action == "get":
            return await answer(client.docs_job(job_id))
        return await _wait(client, job_id, timeout_seconds)

    @server.tool(annotations=DESTRUCTIVE)
    async def brain_docs_folders(
        action: Annotated[Literal["list", "remove"], Field(description="list indexed folders, or remove one")]
        = "list",
        folder_path: Annotated[str | None, Field(min_length=1, max_length=4096, description="For remove")] = None,
        confirm: Annotated[StrictBool, Field(description="For remove: must be true (its chunks are deleted)")]
        = False,
    ) -> str:
        """Indexed folders with their chunk and file counts and watch mode; remove one with confirm=true."""
        if action == "list":
            return await answer(client.docs_folders())
        if not folder_path:
            raise ToolError("folder_path: required for action=remove")
        if confirm is not True:
            raise ToolError("confirm: must be true -- remove deletes the folder's indexed chunks")
        return await answer(client.docs_remove_folder(folder_path))

    @server.tool(annotations=DESTRUCTIVE)
    async def brain_docs_cache(
        action: Annotated[Literal["status", "clear"], Field(description="status (entries, size, hits) or "
                                                                        "clear")] = "status",
        confirm: Annotated[StrictBool, Field(description="For clear: must be true (the next index re-embeds)")]
        = False,
    ) -> str:
        """The embedding cache (an unchanged chunk is never embedded twice): its statistics, or clear it."""
        if action == "clear" and confirm is not True:
            raise ToolError("confirm: must be true -- clear drops every cached embedding")
        return await answer(client.docs_cache(clear=action == "clear"))


async def _wait(client: AsyncBrainClient, job_id: str, timeout_seconds: float) -> str:
    """The job once it finished (`"final": true`), or as it stands when `timeout_seconds` ran out (`false`)."""
    deadline = time.monotonic() + timeout_seconds
    while True:
        try:
            job = await client.docs_job(job_id)
        except BrainError as error:
            raise ToolError(str(error)) from error
        final = job.get("status") in FINISHED
        if final or time.monotonic() >= deadline:
            return json.dumps({**job, "final": final}, indent=2, ensure_ascii=False)
        await asyncio.sleep(WAIT_POLL_SECONDS)
