"""Stand-ins for the two layers the dashboard shows once they are deployed, for its test only: the documents base
(`/kb`, the Agent Brain API: shapes of `shared/spec/agent-brain-api.md` and docs/documents.md) and the chat layer
(`/api/v1`, Mnexium: shapes the official `mnexium` SDK reads). Neither is in this branch's API yet; mounted under
the embedded app (behind its key check), they let the test drive the Documents and Chat tabs. Each answers from a
small fixed set and records the requests, so the test can check what the dashboard asked for."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request

PASSAGES = [
    {"source": "runbooks/postgres.md", "text": "Failover of the Acme PostgreSQL primary: promote the replica."},
    {"source": "runbooks/kafka.md", "text": "Kafka consumer lag alerts page the on-call after ten minutes."},
    {"source": "adr/0007-redis.md", "text": "Decision: Redis holds the Acme session cache."},
]
SUBJECT = "user-42"


def documents_standin(requests: list[dict[str, Any]]) -> FastAPI:
    app = FastAPI()

    @app.get("/health/status")
    def status() -> dict[str, Any]:
        return {"total_documents": 3, "total_chunks": 7, "indexing_in_progress": False, "current_job_id": None,
                "progress_percent": 100.0, "last_indexed_at": "2026-11-30T09:00:00Z",
                "indexed_folders": ["/srv/docs"],
                "graph_index": {"enabled": False, "entity_count": 0, "relationship_count": 0, "store_type": "none"}}

    @app.get("/index/folders")
    def folders() -> dict[str, Any]:
        return {"folders": [{"folder_path": "/srv/docs", "chunk_count": 7, "file_count": 3,
                             "last_indexed": "2026-11-30T09:00:00Z", "watch_mode": "off"}], "total": 1}

    @app.get("/index/jobs")
    def jobs(limit: int = 50) -> dict[str, Any]:
        job = {"id": "job-1", "job_id": "job-1", "status": "done", "folder_path": "/srv/docs", "operation": "index",
               "include_code": True, "source": "manual", "enqueued_at": "2026-11-30T08:59:00Z",
               "started_at": "2026-11-30T08:59:01Z", "finished_at": "2026-11-30T09:00:00Z",
               "progress_percent": 100.0, "error": None}
        return {"jobs": [job][:limit], "total": 1, "pending": 0, "running": 0, "completed": 1, "failed": 0}

    @app.post("/query")
    async def query(request: Request) -> dict[str, Any]:
        body = await request.json()
        requests.append(body)
        words = {word.casefold() for word in str(body.get("query", "")).split()}
        found = [passage for passage in PASSAGES if words & {word.casefold() for word in passage["text"].split()}]
        results = [{**passage, "chunk_id": f"c{rank}", "score": 0.9 - rank / 10, "vector_score": 0.8,
                    "bm25_score": 0.7, "source_type": "doc", "metadata": {}}
                   for rank, passage in enumerate(found[: int(body.get("top_k", 5))])]
        return {"results": results, "query_time_ms": 1.0, "total_results": len(results)}

    return app


def chat_standin(requests: list[dict[str, Any]]) -> FastAPI:
    app = FastAPI()

    @app.get("/prompts")
    def prompts() -> dict[str, Any]:
        return {"prompts": [
            {"id": "p1", "name": "Support tone", "prompt_text": "Answer briefly and kindly.", "is_default": True,
             "created_at": "2026-11-01T10:00:00Z"},
            {"id": "p2", "name": "Billing", "prompt_text": "Quote invoice numbers.", "is_default": False,
             "created_at": "2026-11-02T10:00:00Z"}]}

    @app.get("/memories")
    def memories(subject_id: str, limit: int = 25) -> dict[str, Any]:
        requests.append({"path": "/memories", "subject_id": subject_id, "limit": limit})
        mine = [{"id": "m1", "text": "Prefers email over phone", "kind": "preference", "status": "active",
                 "created_at": "2026-11-20T10:00:00Z"},
                {"id": "m2", "text": "Lives in Lisbon", "kind": "fact", "status": "active",
                 "created_at": "2026-11-21T10:00:00Z"}]
        return {"data": mine if subject_id == SUBJECT else []}

    @app.get("/claims/subject/{subject_id}/slots")
    def slots(subject_id: str) -> dict[str, Any]:
        found = {"city": {"value": "Lisbon", "confidence": 0.9}, "contact": {"value": "email", "confidence": 0.8}}
        return {"subject_id": subject_id, "slots": found if subject_id == SUBJECT else {}}

    @app.get("/chat/history/list")
    def chats(subject_id: str) -> dict[str, Any]:
        found = [{"chat_id": "chat-7", "subject_id": subject_id, "created_at": "2026-11-20T09:00:00Z",
                  "message_count": 12, "last_message_at": "2026-11-20T09:30:00Z"}]
        return {"chats": found if subject_id == SUBJECT else []}

    return app
