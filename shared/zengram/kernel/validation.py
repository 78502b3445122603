"""Validation errors in words: pydantic's error list as one sentence that names the field (`limit: ...`), the form
every refusal of invalid input takes (the API's 400s, one failed record of an import)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any


def describe_validation_errors(errors: Sequence[Any]) -> str:
    """Turns pydantic's error list into one sentence that names the field: `limit: ...`."""
    first = errors[0] if errors else {}
    location = [str(part) for part in first.get("loc", ()) if part not in ("body", "query", "path", "header")]
    message = str(first.get("msg", "invalid input")).removeprefix("Value error, ")
    if first.get("type") == "json_invalid":
        return "body: invalid JSON"
    if location and not re.match(rf"{re.escape(location[0])}[.:]", message):  # the message may name a sub-field
        return f"{'.'.join(location)}: {message}"
    if not location and first.get("type") in ("missing", "dict_type", "model_attributes_type"):
        return "body: a JSON object is required"
    if not location and not re.match(r"^\w+:", message):
        return f"body: {message}"
    return message
