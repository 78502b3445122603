"""Measuring JSON-like values for the request limits (metadata depth and size, finite numbers).

Apart from `content` (the credential scrubber and its detectors), so the request models need only these when a
Lambda function starts."""

from __future__ import annotations

import json
import math
from typing import Any


def json_depth(value: Any) -> int:
    """Nesting depth of objects and arrays: a scalar is 0, `{"a": 1}` is 1. Measured without recursion, so a
    value nested thousands of levels deep is measured (and refused), not a RecursionError."""
    deepest = 0
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, level = pending.pop()
        children = _children(item)
        if children is not None:
            deepest = max(deepest, level)
            pending.extend((child, level + 1) for _, child in children)
    return deepest


def non_finite_number_at(value: Any) -> str | None:
    """The dotted path of the first NaN or ±Infinity inside a JSON-like value (`""` for the value itself), or
    None. Python's JSON reader takes `NaN`, `Infinity` and `1e999`, but they are not JSON: stored, they would
    come back as null."""
    pending: list[tuple[Any, str]] = [(value, "")]
    while pending:
        item, path = pending.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return path
        children = _children(item) or []
        pending.extend((child, f"{path}.{name}" if path else str(name)) for name, child in reversed(children))
    return None


def _children(value: Any) -> list[tuple[object, Any]] | None:
    """An object's or array's (name, item) pairs; None for a scalar."""
    if isinstance(value, dict):
        return list(value.items())
    if isinstance(value, list):
        return list(enumerate(value))
    return None


def json_size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
