"""Client fingerprint bodies (/clients)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from zengram.web.schemas import documented_error


class ClientBody(BaseModel):
    """One client fingerprint (PUT/GET /clients/{client_id})."""

    client_id: str
    name: str | None
    aliases: list[str]
    people: list[str]
    domains: list[str]
    keywords: list[str]
    created_at: str
    updated_at: str
    revision: int


class ClientListBody(BaseModel):
    count: int
    clients: list[ClientBody]


class ClientDeletedBody(BaseModel):
    client_id: str
    deleted: bool


CLIENT_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: documented_error("No such client")}
