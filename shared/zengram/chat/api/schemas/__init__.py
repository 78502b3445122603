"""Response bodies of the chat routes, one module per router, typed so the OpenAPI document states their shape
(field names as the Mnexium SDK reads them). Here: what every router shares. A function imports only its routers'
modules, so its init builds only the bodies it serves (#18 §5)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from zengram.web.schemas import documented_error

CHAT_ERRORS: dict[int | str, dict[str, Any]] = {
    400: documented_error("Invalid input; the message names the field"),
    401: documented_error("Missing or invalid API key (x-mnexium-key, x-api-key or Bearer)"),
    403: documented_error("The API key's role or clients do not allow this (docs/keys.md)"),
    404: documented_error("Not found in this project"),
    409: documented_error("Conflicting state"),
    429: documented_error("Rate limited per API key; the Retry-After header says when to retry"),
    503: documented_error("The search index (or a provider) is unavailable"),
}


class DeletedBody(BaseModel):
    ok: bool
    deleted: bool

