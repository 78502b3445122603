"""Test doubles and helpers shared by the suites. Only test code lives here."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from zengram.kernel.content import Scrubber, derive_digest_key
from zengram.kernel.text import words

if TYPE_CHECKING:
    from zengram.assembly.containers import Container
    from zengram.memory.domain.models import Memory

REPO_ROOT = Path(__file__).resolve().parents[1]
API_KEY = "test-key-0123456789"
# The scrubber a container built with API_KEY (and no ZENGRAM_SCRUB_KEY) uses: tests can predict placeholders.
TEST_SCRUBBER = Scrubber(derive_digest_key(API_KEY))


class HashingEmbedder:
    """A deterministic bag-of-words embedder: texts sharing words get similar vectors.

    Good enough to exercise ranking and filtering without loading a model; the real model has its own tests.
    """

    def __init__(self, dimension: int = 64, model_id: str = "test:hashing") -> None:
        self._dimension = dimension
        self._model_id = model_id
        self.calls = 0

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls += 1
        vectors = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in words(text) or ["<empty>"]:
                digest = hashlib.sha256(word.encode()).digest()
                vectors[row, int.from_bytes(digest[:4], "little") % self._dimension] += 1.0
            vectors[row] /= np.linalg.norm(vectors[row])
        return vectors


class ManualClock:
    """A clock tests move by hand."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, **delta: float) -> datetime:
        with self._lock:
            self._now += timedelta(**delta)
            return self._now


class TickingClock(ManualClock):
    """Moves forward one millisecond per reading, so every write gets a distinct timestamp."""

    def now(self) -> datetime:
        return self.advance(milliseconds=1)


def pending_index(container: Container, limit: int = 100) -> list[Memory]:
    """The records still waiting for the search index once the index writes queued behind their answers are
    applied (any call on the container's index waits for those first)."""
    container.index.count()
    return container.outbox.pending_index(limit)
