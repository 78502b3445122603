"""The document knowledge base over HTTP, mounted at /kb in the embedded app: routes with and without trailing
slashes, both key headers, status codes, and the response shapes of agent-brain-api.md."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import build_container, build_documents_container
from zengram.embedded.app import build_embedded_app

from tests.api.helpers import TIMESTAMP
from tests.documents.backends import kb_settings
from tests.support import API_KEY, REPO_ROOT, HashingEmbedder, TickingClock

BEARER = {"Authorization": f"Bearer {API_KEY}"}
SAMPLE = REPO_ROOT / "tests" / "data" / "kb_sample"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    shutil.copytree(SAMPLE, tmp_path / "project" / "sample")
    return tmp_path / "project"


@pytest.fixture
def kb(tmp_path: Path, root: Path) -> Iterator[TestClient]:
    settings = kb_settings(tmp_path / "data", [root])
    embedder = HashingEmbedder()
    container = build_container(settings, embedder=embedder, clock=TickingClock())
    documents = build_documents_container(settings, embedder=embedder)
    try:
        with TestClient(build_embedded_app(settings, container, documents)) as client:
            yield client
    finally:
        container.close()


def wait_for(client: TestClient, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job: dict[str, Any] = client.get(f"/kb/index/jobs/{job_id}", headers=BEARER).json()
        if job["status"] in ("done", "failed", "cancelled"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish")


def indexed(client: TestClient, root: Path) -> dict[str, Any]:
    response = client.post("/kb/index/", json={"folder_path": str(root / "sample"), "include_code": True},
                           headers=BEARER)
    assert response.status_code == 202, response.text
    job = wait_for(client, response.json()["job_id"])
    assert job["status"] == "done", job
    return job


def test_health_needs_no_key_in_either_slash_form(kb: TestClient) -> None:
    for path in ("/kb/health", "/kb/health/"):
        body = kb.get(path).json()
        assert set(body) == {"status", "message", "version", "timestamp"}
        assert body["status"] == "healthy" and TIMESTAMP.match(body["timestamp"])
    assert kb.get("/health").json()["status"] == "ok"  # the memory API's own health is untouched


def test_health_says_degraded_or_unhealthy_when_a_store_fails(kb: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    documents = kb.app.routes[-1].app.state.documents.get()  # type: ignore[attr-defined]

    def down(*_: object) -> int:
        raise ConnectionError("index down")

    monkeypatch.setattr(documents.queries._index, "count", down)
    assert kb.get("/kb/health").json()["status"] == "degraded"
    monkeypatch.setattr(documents.queries._chunks, "counts", down)
    body = kb.get("/kb/health/").json()
    assert body["status"] == "unhealthy" and "ConnectionError" in body["message"]


@pytest.mark.parametrize("path", ["/kb/health/status", "/kb/query/count", "/kb/index/jobs/", "/kb/index/folders"])
def test_every_other_route_needs_the_key(kb: TestClient, path: str) -> None:
    assert kb.get(path).status_code == 401
    assert kb.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert kb.get(path, headers={"Authorization": f"Basic {API_KEY}"}).status_code == 401
    assert kb.get(path, headers=BEARER).status_code == 200
    assert kb.get(path, headers={"x-api-key": API_KEY}).status_code == 200


def test_a_bearer_token_works_on_the_memory_api_too(kb: TestClient) -> None:
    assert kb.get("/stats", headers=BEARER).status_code == 200


def test_scoped_keys_as_bearer_tokens_act_by_their_role_and_need_global(kb: TestClient, root: Path) -> None:
    """The Agent Brain CLI sends a scoped key as a bearer token: the key's role decides (read: query and status;
    write: index; admin: reset), and only keys whose clients include `global` see the shared documents."""

    def minted(role: str, clients: list[str] | None) -> dict[str, str]:
        created = kb.post("/admin/keys", json={"name": role, "role": role, "clients": clients}, headers=BEARER)
        assert created.status_code == 201, created.text
        return {"Authorization": f"Bearer {created.json()['key']}"}

    reader, writer = minted("read", ["global"]), minted("write", ["acme", "global"])
    tenant_only = minted("write", ["acme"])
    folder = {"folder_path": str(root / "sample")}

    refused = kb.post("/kb/index", json=folder, headers=reader)
    assert (refused.status_code, refused.json()["error"]) == (403, "role: this API key is read; POST /kb/index "
                                                                   "needs write")
    outsider = kb.post("/kb/index", json=folder, headers=tenant_only)
    assert outsider.status_code == 403 and outsider.json()["error"].startswith("client_id: the document knowledge")
    assert kb.get("/kb/query/count", headers=tenant_only).status_code == 403

    queued = kb.post("/kb/index", json=folder, headers=writer)
    assert queued.status_code == 202, queued.text
    assert wait_for(kb, queued.json()["job_id"])["status"] == "done"
    answer = kb.post("/kb/query", json={"query": "invoice total", "similarity_threshold": 0}, headers=reader)
    assert answer.status_code == 200 and answer.json()["results"]
    assert kb.delete("/kb/index", headers=writer).json()["error"] == "role: this API key is write; DELETE /kb/index " \
                                                                     "needs admin"
    assert kb.get("/kb/query/count", headers=reader).json()["total_chunks"] > 0  # nothing was cleared


def test_query_is_503_until_an_index_is_ready(kb: TestClient) -> None:
    response = kb.post("/kb/query/", json={"query": "invoice"}, headers=BEARER)
    assert response.status_code == 503
    assert response.json()["error"] == response.json()["detail"] == "Index not ready. Please index documents first."
    assert kb.get("/kb/query/count", headers=BEARER).json() == {"total_chunks": 0, "ready": False}


def test_index_then_status_and_query_shapes(kb: TestClient, root: Path) -> None:
    job = indexed(kb, root)
    assert job["progress"]["files_total"] == job["progress"]["files_processed"] == 6
    status = kb.get("/kb/health/status", headers=BEARER).json()
    assert status["total_documents"] == 6 and status["total_chunks"] == job["total_chunks"]
    assert status["indexed_folders"] == [str(root / "sample")]
    assert status["indexing_in_progress"] is False and status["current_job_id"] is None
    assert status["graph_index"]["enabled"] is True and status["graph_index"]["entity_count"] > 0
    assert TIMESTAMP.match(status["last_indexed_at"])
    assert kb.get("/kb/query/count/", headers=BEARER).json() == {"total_chunks": job["total_chunks"], "ready": True}

    hybrid = kb.post("/kb/query", json={"query": "invoice total tax", "similarity_threshold": 0.0},
                     headers=BEARER).json()
    assert set(hybrid) == {"results", "query_time_ms", "total_results"}
    assert hybrid["total_results"] == len(hybrid["results"]) == 5
    first = hybrid["results"][0]
    assert {"text", "source", "score", "vector_score", "bm25_score", "chunk_id", "metadata"} <= set(first)
    assert "graph_score" not in first and "relationships" not in first
    assert first["chunk_id"].startswith("chunk_")

    graph = kb.post("/kb/query/", json={"query": "what calls compute_total", "mode": "graph", "top_k": 3,
                                        "traversal_depth": 2, "include_relationships": True}, headers=BEARER).json()
    assert [result["metadata"].get("symbol") for result in graph["results"]][:2] in (
        ["Invoice", "MonthlyReport"], ["MonthlyReport", "Invoice"])
    for result in graph["results"]:
        assert result["graph_score"] is not None
        assert all(set(relation) == {"type", "target", "source_entity"} for relation in result["relationships"])


@pytest.mark.parametrize(("body", "field"), [
    ({"query": ""}, "query"), ({"query": "   "}, "query"), ({"query": "x", "top_k": 0}, "top_k"),
    ({"query": "x", "top_k": 101}, "top_k"), ({"query": "x", "mode": "fuzzy"}, "mode"),
    ({"query": "x", "alpha": 1.5}, "alpha"), ({"query": "x", "traversal_depth": 6}, "traversal_depth"),
    ({"query": "x", "similarity_threshold": -0.1}, "similarity_threshold"), ({}, "query"),
    ({"query": "x", "languages": ["cobol"]}, "languages"), ({"query": "x", "source_types": ["video"]}, "source_types"),
])
def test_bad_queries_are_400_naming_the_field(kb: TestClient, body: dict[str, Any], field: str) -> None:
    response = kb.post("/kb/query/", json=body, headers=BEARER)
    assert response.status_code == 400, response.text
    assert response.json()["error"].startswith(f"{field}"), response.json()


@pytest.mark.parametrize(("body", "field"), [
    ({}, "folder_path"), ({"folder_path": ""}, "folder_path"), ({"folder_path": "x", "chunk_size": 1}, "chunk_size"),
    ({"folder_path": "x", "chunk_size": 100, "chunk_overlap": 100}, "chunk_overlap"),
    ({"folder_path": "sample", "supported_languages": ["cobol"]}, "supported_languages"),
])
def test_bad_index_requests_are_400(kb: TestClient, body: dict[str, Any], field: str) -> None:
    response = kb.post("/kb/index", json=body, headers=BEARER)
    assert response.status_code == 400, response.text
    assert response.json()["error"].startswith(field)


@pytest.mark.parametrize("folder", ["/etc", "../../..", "/tmp"])
def test_folders_outside_the_allowed_roots_are_403(kb: TestClient, folder: str) -> None:
    response = kb.post("/kb/index/", json={"folder_path": folder}, headers=BEARER)
    assert response.status_code == 403
    assert "outside the allowed roots" in response.json()["error"]
    assert kb.get("/kb/index/jobs", headers=BEARER).json()["total"] == 0


def test_jobs_folders_and_reset(kb: TestClient, root: Path) -> None:
    job = indexed(kb, root)
    listing = kb.get("/kb/index/jobs/?limit=5", headers=BEARER).json()
    assert listing["total"] == listing["completed"] == 1 and listing["jobs"][0]["job_id"] == job["id"]
    assert kb.get("/kb/index/jobs/job_missing", headers=BEARER).status_code == 404
    assert kb.delete(f"/kb/index/jobs/{job['id']}", headers=BEARER).status_code == 409
    folders = kb.get("/kb/index/folders/", headers=BEARER).json()
    assert folders["folders"][0]["folder_path"] == str(root / "sample")
    assert folders["folders"][0]["chunk_count"] == job["total_chunks"]

    reset = kb.delete("/kb/index/", headers=BEARER)
    assert reset.json() == {"job_id": "reset", "status": "completed", "message": "Index cleared successfully",
                            "queue_position": None, "queue_length": None, "dedupe_hit": None}
    assert kb.get("/kb/query/count", headers=BEARER).json() == {"total_chunks": 0, "ready": False}
    assert kb.post("/kb/query", json={"query": "invoice"}, headers=BEARER).status_code == 503

    indexed(kb, root)
    removed = kb.request("DELETE", "/kb/index/folders/", json={"folder_path": str(root / "sample")}, headers=BEARER)
    assert removed.status_code == 200 and removed.json()["chunks_deleted"] == job["total_chunks"]
    missing = kb.request("DELETE", "/kb/index/folders", json={"folder_path": str(root / "sample")}, headers=BEARER)
    assert missing.status_code == 404


def test_openapi_lives_under_the_base_path(kb: TestClient) -> None:
    document = kb.get("/kb/openapi.json").json()
    assert {"/health", "/health/status", "/query", "/query/count", "/index", "/index/add", "/index/jobs",
            "/index/jobs/{job_id}", "/index/folders", "/index/cache",
            "/query/chunk/{chunk_id}", "/health/providers", "/health/config", "/graph/entity/{entity_type}/{entity_id}",
            "/graph/project"} == set(document["paths"])
    assert kb.get("/kb/docs").status_code == 200 and "swagger" in kb.get("/kb/docs").text.lower()
    assert kb.get("/kb/redoc").status_code == 200


def test_documents_are_embedded_by_the_memories_embedder_instance(tmp_path: Path, root: Path) -> None:
    """One model in memory per process: the embedded server's document knowledge base borrows the memories'
    embedder (the CoalescingEmbedder over ONNX MiniLM by default) rather than building its own."""
    from starlette.routing import Mount

    settings = kb_settings(tmp_path / "data", [root])
    container = build_container(settings, embedder=HashingEmbedder(), clock=TickingClock())
    try:
        app = build_embedded_app(settings, container)
        mounted = next(route.app for route in app.routes if isinstance(route, Mount) and route.path == "/kb")
        documents = mounted.state.documents  # type: ignore[attr-defined]
        try:
            assert documents.get().embedder is container.embedder
        finally:
            documents.close()
    finally:
        container.close()


@pytest.mark.parametrize("name", ["loop", "sample/\x00evil"])
def test_a_symlink_loop_or_a_nul_byte_is_400_naming_the_field(kb: TestClient, root: Path, name: str) -> None:
    (root / "loop").symlink_to(root / "loop")  # resolving it never ends: ELOOP / "Symlink loop"
    folder = str(root / name)
    for response in (kb.post("/kb/index", json={"folder_path": folder}, headers=BEARER),
                     kb.request("DELETE", "/kb/index/folders", json={"folder_path": folder}, headers=BEARER)):
        assert response.status_code == 400, response.text
        assert response.json()["error"].startswith("folder_path: "), response.json()
    assert kb.get("/kb/health").status_code == 200  # the connection and the server carry on


def test_embedding_cache_status_and_clear(kb: TestClient, root: Path) -> None:
    """GET/DELETE /kb/index/cache as agent-brain-cli's `cache status` / `cache clear` call them (with the slash)."""
    job = indexed(kb, root)
    status = kb.get("/kb/index/cache/", headers=BEARER).json()
    assert {"entry_count", "size_bytes", "hits", "misses", "hit_rate", "mem_entries"} <= set(status)
    assert status["entry_count"] > 0 and status["misses"] >= job["total_chunks"] and status["size_bytes"] > 0
    cleared = kb.delete("/kb/index/cache/", headers=BEARER).json()
    assert cleared["count"] == status["entry_count"] and cleared["size_mb"] > 0
    assert kb.get("/kb/index/cache", headers=BEARER).json()["entry_count"] == 0


def test_one_chunk_by_id(kb: TestClient, root: Path) -> None:
    """GET /kb/query/chunk/{chunk_id}: Agent Brain's ChunkRecord fields; 404 with `error` for an unknown id."""
    indexed(kb, root)
    hit = kb.post("/kb/query", json={"query": "invoice total tax", "similarity_threshold": 0}, headers=BEARER).json()
    first = hit["results"][0]
    chunk = kb.get(f"/kb/query/chunk/{first['chunk_id']}", headers=BEARER).json()
    assert (chunk["chunk_id"], chunk["content"], chunk["source"]) == (first["chunk_id"], first["text"], first["source"])
    assert chunk["folder_id"] == str(root / "sample") and chunk["token_count"] > 0 and chunk["parent_doc_id"]
    missing = kb.get("/kb/query/chunk/chunk_nothing/", headers=BEARER)
    assert missing.status_code == 404 and "chunk_nothing" in missing.json()["error"]


def test_providers_report_the_embedder(kb: TestClient) -> None:
    answer = kb.get("/kb/health/providers/", headers=BEARER)
    assert answer.status_code == 200
    body = answer.json()
    assert {"config_source", "strict_mode", "validation_errors", "providers", "timestamp"} <= set(body)
    [provider] = body["providers"]
    assert (provider["provider_type"], provider["status"]) == ("embedding", "healthy")
    assert provider["model"] == "test:hashing" and provider["dimensions"] > 0
    assert kb.get("/kb/health/providers").status_code == 401  # unlike /kb/health, it needs a key


def test_a_graph_entity_with_its_neighbours(kb: TestClient, root: Path) -> None:
    indexed(kb, root)
    response = kb.get("/kb/graph/entity/Function/compute_total", headers=BEARER)
    assert response.status_code == 200, response.text
    record = response.json()
    entity_id = record["entity"]["id"]
    assert record["entity"]["type"] == "Function" and entity_id.endswith("billing.py::compute_total")
    callers = {(neighbour["predicate"], neighbour["id"].rsplit("::", 1)[-1])
               for neighbour in record["neighbors"]["incoming"]}
    assert {("calls", "Invoice.total"), ("calls", "MonthlyReport.summarize"), ("imports", "reports")} <= callers
    # by its graph id (a path, slashes and all), in either slash form; a type it is not, an unknown type, a miss
    assert kb.get(f"/kb/graph/entity/Function/{entity_id}", headers=BEARER).json()["entity"]["id"] == entity_id
    assert kb.get(f"/kb/graph/entity/Class/{entity_id}", headers=BEARER).status_code == 404
    unknown = kb.get("/kb/graph/entity/Gadget/compute_total", headers=BEARER)
    assert unknown.status_code == 400 and "Function" in unknown.json()["error"]
    assert kb.get("/kb/graph/entity/Class/NoSuchClass", headers=BEARER).status_code == 404


def test_config_projection_and_injection_answer_what_this_server_does(kb: TestClient, root: Path) -> None:
    config = kb.get("/kb/health/config", headers=BEARER).json()
    assert config["storage_backend"] == "sqlite" and config["stores"] == {"vector": True, "bm25": True, "graph": True}
    assert config["embedding_model"] == "test:hashing" and config["watcher_running"] is False  # no watcher here
    facts = {"source_tag": "okf", "entities": [{"type": "okf:Claim", "id": "c1"}]}
    projected = kb.post("/kb/graph/project", json=facts, headers=BEARER)
    assert projected.status_code == 503 and "not supported" in projected.json()["error"]
    assert kb.post("/kb/graph/project", json={"source_tag": "1 bad"}, headers=BEARER).status_code == 400
    assert kb.delete("/kb/graph/project", params={"source_tag": "okf"}, headers=BEARER).status_code == 503
    for field, value in (("injector_script", "/tmp/enrich.py"), ("folder_metadata_file", "/tmp/meta.json")):
        refused = kb.post("/kb/index", json={"folder_path": str(root / "sample"), field: value}, headers=BEARER)
        assert refused.status_code == 400 and refused.json()["error"].startswith(f"{field}: "), refused.text


@pytest.fixture
def watched_kb(tmp_path: Path, root: Path) -> Iterator[TestClient]:
    """As `kb`, with the documents built as the embedded host builds them (`recover`: the file watcher runs)."""
    settings = kb_settings(tmp_path / "data", [root])
    embedder = HashingEmbedder()
    container = build_container(settings, embedder=embedder, clock=TickingClock())
    documents = build_documents_container(settings, embedder=embedder, recover=True)
    try:
        with TestClient(build_embedded_app(settings, container, documents)) as client:
            yield client
    finally:
        container.close()


def test_a_watched_folder_is_reindexed_when_a_file_changes(watched_kb: TestClient, root: Path) -> None:
    """The embedded host's file watcher (watchfiles): a new file under a watched folder answers queries."""
    kb = watched_kb
    assert kb.get("/kb/health/config", headers=BEARER).json()["watcher_running"] is True
    response = kb.post("/kb/index", json={"folder_path": str(root / "sample"), "include_code": True,
                                          "watch_mode": "auto", "watch_debounce_seconds": 1}, headers=BEARER)
    assert wait_for(kb, response.json()["job_id"])["status"] == "done"
    [folder] = kb.get("/kb/index/folders", headers=BEARER).json()["folders"]
    assert (folder["watch_mode"], folder["watch_debounce_seconds"]) == ("auto", 1)
    deadline = time.monotonic() + 10
    while kb.get("/kb/health/status", headers=BEARER).json()["file_watcher"]["watched_folders"] != 1:
        assert time.monotonic() < deadline, "the watcher did not pick the folder up"
        time.sleep(0.2)
    (root / "sample" / "docs" / "quokka.txt").write_text("Quokkas live on Rottnest island.\n")
    deadline = time.monotonic() + 30
    query = {"query": "quokkas rottnest", "mode": "bm25", "similarity_threshold": 0}
    while not kb.post("/kb/query", json=query, headers=BEARER).json()["results"]:
        assert time.monotonic() < deadline, "the new file was not indexed"
        time.sleep(0.3)
    jobs = kb.get("/kb/index/jobs", headers=BEARER).json()["jobs"]
    assert jobs[0]["source"] == "auto" and jobs[-1]["source"] == "manual"
