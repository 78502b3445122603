"""Scoped API key bodies (/admin/keys)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from zengram.web.schemas import documented_error

# -- /admin/keys -----------------------------------------------------------------------------------------


class ApiKeyBody(BaseModel):
    """A scoped API key as listed: never the key itself."""

    id: str
    name: str
    role: str
    clients: list[str] | Literal["all"]
    created_at: str
    revoked_at: str | None = None


class CreatedKeyBody(ApiKeyBody):
    key: str  # shown here once; the server keeps only a salted hash


class ApiKeyListBody(BaseModel):
    count: int
    keys: list[ApiKeyBody]


class RevokedKeyBody(BaseModel):
    id: str
    revoked: bool
    revoked_at: str


KEY_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: documented_error("No such API key")}
