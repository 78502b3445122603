"""Text rules that validate and also say so in the JSON Schema, so the OpenAPI document states what the server
enforces: a client generated from it never sends a blank string the server would refuse."""

from __future__ import annotations

from typing import Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

# At least one character that is not whitespace as Python's `str.strip` sees it (JSON Schema patterns search,
# unanchored). Spelled out because `\S` differs between regex dialects: ECMA-262's takes U+001C..U+001F as text.
SOME_TEXT_PATTERN = r"[^\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"


def not_blank(value: str) -> str:
    """A text field's validator: some non-whitespace text."""
    if not value.strip():
        raise ValueError("must not be blank")
    return value


class HasText:
    """`Annotated` marker for a field whose validation already refuses blank text (`strip_whitespace` with
    `min_length`, or a list validator): documents it as a `pattern`."""

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        json_schema = handler(schema)
        json_schema["pattern"] = SOME_TEXT_PATTERN
        return json_schema


class NotBlank(HasText):
    """`Annotated` marker: refuses blank text ("must not be blank") and documents it as a `pattern`."""

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(not_blank, handler(source))
