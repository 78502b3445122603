"""What every context's response bodies share: the error body and its documented responses, `left_out`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


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
