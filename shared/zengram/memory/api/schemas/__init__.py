"""Response bodies, typed so the OpenAPI document states every field a response carries (and the fuzz test holds
the server to it). A field declared `left_out()` is absent from the body while it is None, rather than sent as null;
every other field is always there.

Here: what every group shares (`truncate`, and from `zengram.web.schemas` the error body and responses,
`left_out`). Each endpoint group's bodies are in a module of their own (`schemas.memory`, `schemas.entities`...), so
a Lambda function builds only its own group's models when it starts; the memory record's three shapes are in
`schemas.records`."""

from __future__ import annotations

from typing import Any

from zengram.web.schemas import ERROR_BODY_SCHEMA as ERROR_BODY_SCHEMA
from zengram.web.schemas import ERROR_RESPONSES as ERROR_RESPONSES
from zengram.web.schemas import ErrorBody as ErrorBody
from zengram.web.schemas import documented_error as documented_error
from zengram.web.schemas import left_out as left_out

COMPACT_CHARS = 200
PREVIEW_CHARS = 120
SUMMARY_CHARS = 80


NOT_FOUND: dict[int | str, dict[str, Any]] = {404: documented_error("No such memory")}
CONFLICT: dict[int | str, dict[str, Any]] = {409: documented_error("Conflicting state")}


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
