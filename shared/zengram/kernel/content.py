"""Content hygiene: credential scrubbing (detectors in `credentials`) and the content hash. Metadata limits are
measured in `json_limits`."""

from __future__ import annotations

import bisect
import hashlib
import hmac
import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from zengram.kernel.credentials import DETECTORS, MASK, Detector, Span, label_kind, labelled_value_is_secret
from zengram.kernel.placeholders import DIGEST_CHARS, PLACEHOLDER

__all__ = ["DIGEST_CHARS", "MAX_PASSES", "PLACEHOLDER", "Scrubber", "content_hash", "derive_digest_key"]
_DIGEST_KEY_CONTEXT = b"zengram credential placeholder digest v1"
MAX_PASSES = 20  # a guard only: real texts settle in two passes
_CACHED_SECRET = 128  # characters: longer secrets are not kept
_CACHED_PLACEHOLDERS = 4096


def derive_digest_key(deployment_secret: str) -> bytes:
    """The placeholder digests' key, from a secret only the deployment knows (its scrub key or admin key)."""
    return hmac.new(deployment_secret.encode("utf-8"), _DIGEST_KEY_CONTEXT, hashlib.sha256).digest()


class Scrubber:
    """Replaces every credential the detectors find by `[REDACTED:<kind>:<digest>]`.

    The digest is the first 12 hex characters of HMAC-SHA256(key, secret): the same secret always gets the same
    placeholder (so identical texts still dedup), different secrets get different ones (so a redaction never
    makes two different texts equal), and without the deployment's key the digest says nothing about the
    secret, even a guessable one. Scrubbing is idempotent: placeholders are never scrubbed again, so an
    exported record imports with the same text and hash.

    `key` may be a callable, called on the first scrub: hosts that never write never need to fetch it.
    """

    def __init__(self, key: bytes | Callable[[], bytes], detectors: Sequence[Detector] = DETECTORS) -> None:
        self._key = key if isinstance(key, bytes) else None
        self._key_source = None if isinstance(key, bytes) else key
        self._detectors = list(detectors)
        # A text repeating a secret gets its placeholder (the same each time) from here, not from a new HMAC.
        self._placeholders: dict[tuple[str, str], str] = {}

    def scrub(self, text: str) -> str:
        """Redacts until nothing is left to redact. A redaction can expose a neighbour (`…KEY1PGPASSWORD=x`
        reads as a label only once its left side is a placeholder), so one more pass runs after any that found
        something; each pass turns unredacted text into placeholders, which are never redacted again, so the
        passes end, and the result is a fixed point: scrubbing it again changes nothing."""
        for _ in range(MAX_PASSES):
            spans = self.find(text)
            if not spans:
                break
            text = self._replace(text, spans)
        return text

    def scrub_optional(self, text: str | None) -> str | None:
        return self.scrub(text) if text else text

    def scrub_value(self, value: Any) -> Any:
        """Scrubs every string inside a JSON-like value (metadata), object keys included. An entry whose key
        is a secret's label (`{"password": "correct horse battery staple"}`) has its whole value judged as
        that secret."""
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, list):
            return [self.scrub_value(item) for item in value]
        if isinstance(value, dict):
            return {self.scrub(key): self._scrub_entry(key, item) for key, item in value.items()}
        return value

    def find(self, text: str) -> list[Span]:
        """The spans to redact, in order, overlapping findings merged (the first-listed detector names the
        kind on a tie), placeholders already in the text left alone."""
        kept = [(match.start(), match.end()) for match in PLACEHOLDER.finditer(text)]
        # Detectors see placeholders masked: their own words ("[REDACTED:url-credentials:…]") are no label.
        masked = PLACEHOLDER.sub(lambda match: MASK * len(match.group()), text) if kept else text
        ends = [right for _, right in kept]
        found = sorted((start, -end, rank, kind) for rank, detector in enumerate(self._detectors)
                       if detector.hint is None or detector.hint(masked)
                       for span in detector.find(masked) for start, end, kind in _outside(span, kept, ends, text))
        merged: list[Span] = []
        for start, negative_end, _, kind in found:
            if merged and start < merged[-1][1]:
                last_start, last_end, last_kind = merged[-1]
                merged[-1] = (last_start, max(-negative_end, last_end), last_kind)
            else:
                merged.append((start, -negative_end, kind))
        return merged

    def _replace(self, text: str, spans: list[Span]) -> str:
        pieces, done = [], 0
        for start, end, kind in spans:
            pieces += [text[done:start], self._placeholder(kind, text[start:end])]
            done = end
        pieces.append(text[done:])
        return "".join(pieces)

    def _scrub_entry(self, key: str, item: Any) -> Any:
        kind = label_kind(key)
        if kind is not None and isinstance(item, str) and labelled_value_is_secret(kind, item):
            return self._placeholder(kind, item)
        return self.scrub_value(item)

    def _placeholder(self, kind: str, secret: str) -> str:
        if len(secret) > _CACHED_SECRET:
            return self._new_placeholder(kind, secret)
        placeholder = self._placeholders.get((kind, secret))
        if placeholder is None:
            if len(self._placeholders) >= _CACHED_PLACEHOLDERS:
                self._placeholders.clear()
            placeholder = self._placeholders[kind, secret] = self._new_placeholder(kind, secret)
        return placeholder

    def _new_placeholder(self, kind: str, secret: str) -> str:
        digest = hmac.new(self._digest_key(), secret.encode("utf-8"), hashlib.sha256).hexdigest()
        return f"[REDACTED:{kind}:{digest[:DIGEST_CHARS]}]"

    def _digest_key(self) -> bytes:
        if self._key is None:
            assert self._key_source is not None
            self._key = self._key_source()
        return self._key


def _outside(span: Span, placeholders: list[tuple[int, int]], ends: list[int], text: str) -> Iterator[Span]:
    """A finding, less the placeholders already in the text (never scrubbed again): the parts around them,
    trimmed, that still hold a letter or digit. `placeholders` are in order and apart, `ends` their ends: the
    first that may overlap is found by bisection, not by a scan per finding."""
    start, end, kind = span
    overlapping = []
    for left, right in itertools.islice(placeholders, bisect.bisect_right(ends, start), None):
        if left >= end:
            break
        overlapping.append((left, right))
    if not overlapping:
        yield span
        return
    pieces, cursor = [], start
    for left, right in overlapping:
        pieces.append((cursor, left))
        cursor = max(cursor, right)
    pieces.append((cursor, end))
    for left, right in pieces:
        while left < right and not text[left].isalnum():
            left += 1
        while right > left and not text[right - 1].isalnum():
            right -= 1
        if left < right:
            yield left, right, kind


def content_hash(scrubbed_content: str) -> str:
    """First 16 hex characters of SHA-256 of the (already scrubbed) content. Scrubbing keeps distinct secrets
    distinct (see `Scrubber`), so texts that differ only in a secret never share a hash."""
    return hashlib.sha256(scrubbed_content.encode("utf-8")).hexdigest()[:16]
