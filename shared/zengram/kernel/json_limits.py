"""Measuring JSON-like values for the request limits (metadata depth and size, finite numbers).

Apart from `content` (the credential scrubber and its detectors), so the request models need only these when a
Lambda function starts."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any, TypeVar

Json = TypeVar("Json")


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


def within_limits(field: str, *, max_depth: int, max_bytes: int) -> Callable[[Json], Json]:
    """A validator refusing a JSON-like value of `field` nested deeper than `max_depth`, larger than `max_bytes`
    as JSON, or holding a non-finite number; each message names the field (or the path inside it)."""
    def check(value: Json) -> Json:
        # Depth first, measured without recursion: the size check serialises the value, which recurses.
        if json_depth(value) > max_depth:
            raise ValueError(f"{field}: may nest at most {max_depth} levels")
        non_finite = non_finite_number_at(value)
        if non_finite is not None:
            where = f"{field}.{non_finite}" if non_finite else field
            raise ValueError(f"{where}: must be a finite number (NaN and Infinity are not JSON)")
        if json_size(value) > max_bytes:
            raise ValueError(f"{field}: may be at most {max_bytes} bytes as JSON")
        return value
    return check
