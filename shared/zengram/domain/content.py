"""Content hygiene: credential scrubbing, the content hash, metadata limits."""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

REDACTED = "[REDACTED]"

# Each pattern matches a credential; the whole match is replaced, except for labelled secrets
# (`password: x`), where the label is kept so the text still reads naturally.
_WHOLE_MATCH_PATTERNS = [
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.DOTALL),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key id
    re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"),  # OpenAI / Anthropic keys
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),  # GitHub tokens
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}\b"),
    re.compile(r"\bxox[baprs]-[A-Za-z0-9-]{10,}"),  # Slack tokens
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),  # Google API keys
    re.compile(r"\b(?:sk|pk|rk)_(?:live|test)_[0-9A-Za-z]{16,}\b"),  # Stripe keys
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),  # JWTs
    re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"),  # user:password in URLs
]
_BEARER = re.compile(r"\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)
_LABELLED_SECRET = re.compile(
    r"""(?ix)
    \b(password|passwd|pwd|passphrase|secret|client[_-]?secret|api[_-]?key|apikey|access[_-]?key|
       secret[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|private[_-]?key|x-api-key)
    (["']?\s*[:=]\s*|\s+is\s+)
    (["']?)([^\s"',;]{4,})\3
    """
)


def scrub_credentials(text: str) -> str:
    """Replaces anything that looks like a credential with `[REDACTED]`."""
    for pattern in _WHOLE_MATCH_PATTERNS:
        text = pattern.sub(REDACTED, text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    return _LABELLED_SECRET.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}{REDACTED}{m.group(3)}", text)


def scrub_value(value: Any) -> Any:
    """Scrubs every string inside a JSON-like value (metadata), object keys included."""
    if isinstance(value, str):
        return scrub_credentials(value)
    if isinstance(value, dict):
        return {scrub_credentials(key): scrub_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [scrub_value(item) for item in value]
    return value


def content_hash(scrubbed_content: str) -> str:
    """First 16 hex characters of SHA-256 of the (already scrubbed) content."""
    return hashlib.sha256(scrubbed_content.encode("utf-8")).hexdigest()[:16]


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
