"""Response bodies, typed so the OpenAPI document states every field a response carries (and the fuzz test holds
the server to it). A field declared `left_out()` is absent from the body while it is None, rather than sent as null;
every other field is always there.

Here: what every group shares (the error body and responses, `left_out`, `truncate`). Each endpoint group's bodies
are in a module of their own (`schemas.memory`, `schemas.entities`...), so a Lambda function builds only its own
group's models when it starts; the memory record's three shapes are in `schemas.records`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

COMPACT_CHARS = 200
PREVIEW_CHARS = 120
SUMMARY_CHARS = 80


def _is_none(value: object) -> bool:
    return value is None


def left_out() -> Any:
    """The field of a body that is left out while it is None (rather than sent as null)."""
    return Field(default=None, exclude_if=_is_none)


class ErrorBody(BaseModel):
    error: str


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "Invalid input; the message names the field"},
    401: {"model": ErrorBody, "description": "Missing or invalid x-api-key"},
    403: {"model": ErrorBody, "description": "The API key's role or clients do not allow this (docs/keys.md)"},
    429: {"model": ErrorBody, "description": "Rate limited per API key; the Retry-After header says when to retry"},
}
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ErrorBody, "description": "No such memory"}}
CONFLICT: dict[int | str, dict[str, Any]] = {409: {"model": ErrorBody, "description": "Conflicting state"}}


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
