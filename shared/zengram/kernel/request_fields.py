"""The field types every request model shares (content, metadata, paging) and the limits they enforce.

A module without the memory models, so the chat layer's request models (and a function serving only them) need
not build the memory API's. `zengram.memory.domain.requests` re-exports these names."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, StringConstraints, WithJsonSchema

from zengram.kernel.json_limits import within_limits
from zengram.kernel.text_rules import NotBlank

MAX_CONTENT_CHARS = 10_000
MAX_METADATA_BYTES = 10 * 1024
MAX_METADATA_DEPTH = 3
MAX_OFFSET = 1_000_000  # deeper paging is a mistake (and would overflow SQLite's integers)


_metadata_within_limits = within_limits("metadata", max_depth=MAX_METADATA_DEPTH, max_bytes=MAX_METADATA_BYTES)


Content = Annotated[str, StringConstraints(max_length=MAX_CONTENT_CHARS), NotBlank()]


def _not_a_boolean(value: Any) -> Any:
    """JSON Schema's numbers hold no `true` or `false`; pydantic's lax mode would read them as 1 and 0."""
    if isinstance(value, bool):
        raise ValueError("must be a number, not true or false")
    return value


# `Annotated[int, Field(ge=0), NotBoolean]`: a number field of a request body that refuses booleans (after the
# `Field`: placed before it, pydantic writes the bounds into the JSON schema as `ge`/`le`, not `minimum`/`maximum`).
NotBoolean = BeforeValidator(_not_a_boolean)

_JSON_SCALAR: dict[str, Any] = {"type": ["string", "number", "boolean", "null"]}


def nesting_schema(levels: int) -> dict[str, Any]:
    """JSON Schema of a value holding at most `levels` levels of objects and arrays."""
    if levels == 0:
        return _JSON_SCALAR
    inner = nesting_schema(levels - 1)
    return {"anyOf": [_JSON_SCALAR, {"type": "object", "additionalProperties": inner},
                      {"type": "array", "items": inner}]}


# What `_metadata_within_limits` enforces, in the OpenAPI document: the depth exactly, the size in words.
METADATA_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": nesting_schema(MAX_METADATA_DEPTH - 1),
    "description": f"Free-form JSON object: at most {MAX_METADATA_DEPTH} levels of objects and arrays, at most "
                   f"{MAX_METADATA_BYTES} bytes as JSON, finite numbers only",
}
Metadata = Annotated[dict[str, Any], AfterValidator(_metadata_within_limits), WithJsonSchema(METADATA_SCHEMA)]
