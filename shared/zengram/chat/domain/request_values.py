"""JSON values a chat caller stores (agent state, record data): bounded depth and size, finite numbers, each limit
stated in the JSON Schema too. Shared by the chat turn's requests (`requests`) and a subject's data
(`data_requests`)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, WithJsonSchema

from zengram.kernel.json_limits import within_limits
from zengram.kernel.request_fields import nesting_schema

MAX_VALUE_BYTES = 64 * 1024
MAX_VALUE_DEPTH = 8


# A stored JSON value (agent state, record data): bounded depth and size, finite numbers.
json_value_within_limits = within_limits("value", max_depth=MAX_VALUE_DEPTH, max_bytes=MAX_VALUE_BYTES)


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
