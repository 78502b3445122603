"""A stand-in for the chat layer (`/api/v1`, Mnexium-style: the shapes the official `mnexium` SDK reads), for the
dashboard's test only: the layer is not in the API yet. Mounted under the embedded app (behind its key check), it
lets the test drive the Chat tab; it answers from a small fixed set and records what the dashboard asked for."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

SUBJECT = "user-42"


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
