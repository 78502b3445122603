"""Seeding with pooled vectors: stores of 100k-1M memories on a machine that cannot embed that many texts in a session.

`ZENGRAM_BENCH_POOLED_VECTORS=P` (with `ZENGRAM_BENCH_DATA` pointing at a folder of their own) makes the seeding
embedder compute real MiniLM vectors for the corpus's first `P` texts and derive every other text's vector from that
pool: the normalised sum of two pool vectors the text's digest picks (weights 1 and 0.5) and a
little noise seeded by the same digest. Each text keeps one vector, the same on every run, and the vectors cluster
as real ones do (a pool vector's neighbours are its own derivatives), so the index, the HNSW graph and the keyword
postings are as large and as busy as a real store's. What such a store cannot give is search *quality*: a query,
embedded for real by the server, finds the derived vectors by their pool parents, not by its words. Latency, memory,
disk and start-up figures measured on it are the point; recall is not (`make bench-recall` measures that).

The pool is embedded through the seeding's vector cache, so a resumed or bigger seeding reuses its vectors.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from zengram.kernel.ports import Embedder

from bench.wrapping import InFrontOf

POOLED_ENV = "ZENGRAM_BENCH_POOLED_VECTORS"
SECOND_PARENT_WEIGHT = 0.5
NOISE = 0.05  # per coordinate, before normalising: a derived vector's cosine to its first parent is ~0.85-0.9


def pool_size_from_env() -> int:
    """The pool size `ZENGRAM_BENCH_POOLED_VECTORS` asks for; 0: every text is embedded (the default)."""
    value = os.environ.get(POOLED_ENV, "").strip()
    if not value:
        return 0
    size = int(value)
    if size < 2:
        raise SystemExit(f"{POOLED_ENV} must be at least 2 (the pool's size), got {value}")
    return size


class PooledEmbedder(InFrontOf):
    """The `Embedder` port: real vectors for the pool's texts, derived ones for every other text (see the module).

    The pool is the given texts (the corpus's first ones), embedded on the first call through `inner`, so a
    resumed seeding derives the same vectors as the run it continues."""

    def __init__(self, inner: Embedder, pool_texts: Sequence[str], batch: int = 256) -> None:
        if len(pool_texts) < 2:
            raise ValueError("a pool needs at least two texts")
        super().__init__(inner)
        self._pool_texts = list(pool_texts)
        self._batch = batch
        self._pool: npt.NDArray[np.float32] | None = None
        self._position = {text: row for row, text in enumerate(self._pool_texts)}
        self._lock = threading.Lock()
        self.derived = 0

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        pool = self._loaded_pool()
        rows = []
        for text in texts:
            row = self._position.get(text)
            rows.append(pool[row] if row is not None else derived_vector(text, pool))
        with self._lock:
            self.derived += sum(text not in self._position for text in texts)
        return np.vstack(rows).astype(np.float32) if rows else np.empty((0, self.dimension), np.float32)

    def _loaded_pool(self) -> npt.NDArray[np.float32]:
        with self._lock:
            if self._pool is None:
                texts = self._pool_texts
                self._pool = np.vstack([self._inner.embed(texts[start:start + self._batch])
                                        for start in range(0, len(texts), self._batch)]).astype(np.float32)
            return self._pool


def derived_vector(text: str, pool: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The vector of a text past the pool: the same for the same text and pool, unit length."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    first = int.from_bytes(digest[:8], "little") % len(pool)
    second = int.from_bytes(digest[8:16], "little") % len(pool)
    rng = np.random.default_rng(int.from_bytes(digest[16:24], "little"))
    noise: npt.NDArray[np.float64] = rng.standard_normal(int(pool.shape[1]))
    vector = pool[first] + SECOND_PARENT_WEIGHT * pool[second] + NOISE * noise
    unit: npt.NDArray[np.float32] = (vector / float(np.linalg.norm(vector))).astype(np.float32)
    return unit
