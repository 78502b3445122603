"""JSON values a chat caller stores (agent state, record data): bounded depth and size, finite numbers, each limit
stated in the JSON Schema too. Shared by the chat turn's requests (`requests`) and a subject's data
(`data_requests`)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, WithJsonSchema

from zengram.domain.json_limits import json_depth, json_size, non_finite_number_at
from zengram.domain.request_fields import nesting_schema

MAX_VALUE_BYTES = 64 * 1024
MAX_VALUE_DEPTH = 8


def json_value_within_limits(value: Any) -> Any:
    """A stored JSON value (agent state, record data): bounded depth and size, finite numbers."""
    if json_depth(value) > MAX_VALUE_DEPTH:
        raise ValueError(f"value: may nest at most {MAX_VALUE_DEPTH} levels")
    non_finite = non_finite_number_at(value)
    if non_finite is not None:
        raise ValueError(f"value.{non_finite}: must be a finite number (NaN and Infinity are not JSON)")
    if json_size(value) > MAX_VALUE_BYTES:
        raise ValueError(f"value: may be at most {MAX_VALUE_BYTES} bytes as JSON")
    return value


VALUE_SCHEMA: dict[str, Any] = {
    **nesting_schema(MAX_VALUE_DEPTH),
    "description": f"Any JSON value: at most {MAX_VALUE_DEPTH} levels of objects and arrays, at most "
                   f"{MAX_VALUE_BYTES} bytes as JSON, finite numbers only",
}
JsonValue = Annotated[Any, AfterValidator(json_value_within_limits), WithJsonSchema(VALUE_SCHEMA)]
RECORD_DATA_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": nesting_schema(MAX_VALUE_DEPTH - 1),
    "description": f"The record's fields (validated against its schema): at most {MAX_VALUE_DEPTH} levels, at most "
                   f"{MAX_VALUE_BYTES} bytes as JSON, finite numbers only",
}
RecordData = Annotated[dict[str, Any], AfterValidator(json_value_within_limits), WithJsonSchema(RECORD_DATA_SCHEMA)]
