"""The document-base tools of `zengram-mcp` (Agent Brain's MCP tools as far as they talk to the server), started
by the MCP SDK's own client over stdio against a running embedded server: each is called and its answer checked
against what the /kb routes hold."""

from __future__ import annotations

from typing import Any

from mcp.client.session import ClientSession
from mcp.types import CallToolResult
from zengram.embedded.background import BackgroundServer

from tests.clients.test_mcp import DOCUMENT_TOOLS, Recorder, payload, text, with_mcp
from tests.support import REPO_ROOT

SAMPLE = str(REPO_ROOT / "tests" / "data" / "kb_sample")


def test_every_document_tool_indexes_follows_reads_and_removes_a_folder(live_server: BackgroundServer) -> None:
    async def scenario(session: ClientSession) -> tuple[set[str], dict[str, Any]]:
        call = Recorder(session)
        seen: dict[str, Any] = {"refused": await refused_calls(session)}
        seen["queued"] = payload(await call("brain_docs_index", {"folder_path": SAMPLE, "chunk_size": 256}))
        job_id = seen["queued"]["job_id"]
        seen["waited"] = payload(await call("brain_docs_jobs", {"action": "wait", "job_id": job_id}))
        seen["job"] = payload(await call("brain_docs_jobs", {"action": "get", "job_id": job_id}))
        seen["jobs"] = payload(await call("brain_docs_jobs", {"limit": 5}))
        seen["status"] = payload(await call("brain_docs_status", {}))
        seen["hits"] = payload(await call("brain_docs_query", {"query": "compute_total", "mode": "bm25"}))
        chunk_id = seen["hits"]["results"][0]["chunk_id"]
        seen["chunk"] = payload(await call("brain_docs_chunk", {"chunk_id": chunk_id}))
        seen["cache"] = payload(await call("brain_docs_cache", {}))
        seen["cleared"] = payload(await call("brain_docs_cache", {"action": "clear", "confirm": True}))
        seen["cache_after"] = payload(await call("brain_docs_cache", {"action": "status"}))
        seen["folders"] = payload(await call("brain_docs_folders", {}))
        seen["removed"] = payload(await call("brain_docs_folders", {"action": "remove", "folder_path": SAMPLE,
                                                                    "confirm": True}))
        seen["status_after"] = payload(await call("brain_docs_status", {}))
        seen["no_job"] = await call("brain_docs_jobs", {"action": "cancel", "job_id": "no-such-job"})
        return call.called, seen

    called, seen = with_mcp(live_server, scenario)

    assert called == DOCUMENT_TOOLS
    assert seen["queued"]["status"] == "pending"
    assert seen["waited"]["final"] is True and seen["waited"]["status"] == "done"
    assert seen["job"]["total_chunks"] == seen["status"]["total_chunks"] > 0
    assert [job["job_id"] for job in seen["jobs"]["jobs"]] == [seen["queued"]["job_id"]]
    assert seen["status"]["indexed_folders"] == [SAMPLE] and seen["status"]["indexing_in_progress"] is False
    assert seen["chunk"]["chunk_id"] == seen["hits"]["results"][0]["chunk_id"]
    assert seen["chunk"]["content"] == seen["hits"]["results"][0]["text"]
    assert seen["cache"]["entry_count"] == seen["cleared"]["count"] > 0
    assert seen["cache_after"]["entry_count"] == 0
    [folder] = seen["folders"]["folders"]
    assert folder["folder_path"] == SAMPLE and folder["chunk_count"] == seen["status"]["total_chunks"]
    assert seen["removed"]["chunks_deleted"] == folder["chunk_count"]
    assert seen["status_after"]["total_chunks"] == 0 and seen["status_after"]["indexed_folders"] == []
    assert seen["no_job"].is_error and "HTTP 404" in text(seen["no_job"])
    for name, expected in (("job_id", "job_id:"), ("limit", "limit"), ("remove_unconfirmed", "confirm:"),
                           ("remove_nothing", "folder_path:"), ("clear_unconfirmed", "confirm:"),
                           ("chunk_size", "chunk_size"), ("watch", "watch_mode")):
        refused = seen["refused"][name]
        assert refused.is_error and expected in text(refused), (name, text(refused))
        assert "HTTP " not in text(refused), (name, "refused before any request")  # and the job list has one


async def refused_calls(session: ClientSession) -> dict[str, CallToolResult]:
    """Wrong arguments, each refused by the tool before any request is sent."""
    call = session.call_tool
    return {
        "job_id": await call("brain_docs_jobs", {"action": "wait"}),
        "limit": await call("brain_docs_jobs", {"limit": 0}),
        "remove_unconfirmed": await call("brain_docs_folders", {"action": "remove", "folder_path": SAMPLE}),
        "remove_nothing": await call("brain_docs_folders", {"action": "remove", "confirm": True}),
        "clear_unconfirmed": await call("brain_docs_cache", {"action": "clear"}),
        "chunk_size": await call("brain_docs_index", {"folder_path": SAMPLE, "chunk_size": 8}),
        "watch": await call("brain_docs_index", {"folder_path": SAMPLE, "watch_mode": "always"}),
    }
