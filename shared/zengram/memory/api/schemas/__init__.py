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


ERROR_BODY_SCHEMA = f"#/components/schemas/{ErrorBody.__name__}"


def documented_error(description: str) -> dict[str, Any]:
    """An error status in a route's `responses`: the ErrorBody, by reference. With `"model": ErrorBody` FastAPI
    would build a serializer for each route and status that only the OpenAPI document uses (239 in the chat
    function, a third of its routes' cost at init); the app's document lists ErrorBody once instead
    (`zengram.web.app`)."""
    return {"description": description, "content": {"application/json": {"schema": {"$ref": ERROR_BODY_SCHEMA}}}}


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: documented_error("Invalid input; the message names the field"),
    401: documented_error("Missing or invalid x-api-key"),
    403: documented_error("The API key's role or clients do not allow this (docs/keys.md)"),
    429: documented_error("Rate limited per API key; the Retry-After header says when to retry"),
}
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: documented_error("No such memory")}
CONFLICT: dict[int | str, dict[str, Any]] = {409: documented_error("Conflicting state")}


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
