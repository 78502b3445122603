"""GET /health's body."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class HealthBody(BaseModel):
    status: Literal["ok", "degraded"]
    service: str
    checks: dict[str, Literal["up", "down"]]  # records, search_index, embeddings
    timestamp: str
