"""The embedding cache (GET/DELETE /kb/index/cache): an unchanged chunk text is never embedded twice by one model.

`CachingEmbedder` wraps the embedder the document base uses (indexing, and the query's re-scoring of candidates):
each text is looked up by `<model id>:<sha256(text)>` in the store kept beside the documents' records (a SQLite
table on the embedded host); only the misses reach the model. Hits and misses are counted since the process
started (Agent Brain's server counts the same way).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from zengram.documents.ports import EmbeddingCacheStore
from zengram.kernel.ports import Embedder

if TYPE_CHECKING:
    from zengram.documents.ports import Vectors


@dataclass(frozen=True)
class CacheStats:
    entries: int
    size_bytes: int
    hits: int
    misses: int

    @property
    def hit_rate(self) -> float:
        asked = self.hits + self.misses
        return round(self.hits / asked, 4) if asked else 0.0


class CachingEmbedder:
    def __init__(self, embedder: Embedder, store: EmbeddingCacheStore) -> None:
        self._embedder = embedder
        self._store = store
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0

    @property
    def model_id(self) -> str:
        return self._embedder.model_id

    @property
    def dimension(self) -> int:
        return self._embedder.dimension

    def key(self, text: str) -> str:
        return f"{self.model_id}:{hashlib.sha256(text.encode()).hexdigest()}"

    def embed(self, texts: Sequence[str]) -> Vectors:
        keys = [self.key(text) for text in texts]
        found = self._store.get(list(dict.fromkeys(keys)))
        missing = list(dict.fromkeys(key for key in keys if key not in found))
        if missing:
            text_of = dict(zip(keys, texts, strict=True))
            fresh = self._embedder.embed([text_of[key] for key in missing])
            computed = {key: fresh[row] for row, key in enumerate(missing)}
            self._store.put(computed)
            found = {**found, **computed}
        with self._lock:
            self._hits += len(texts) - len(missing)
            self._misses += len(missing)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([found[key] for key in keys]).astype(np.float32, copy=False)

    def stats(self) -> CacheStats:
        entries, size = self._store.stats()
        with self._lock:
            return CacheStats(entries=entries, size_bytes=size, hits=self._hits, misses=self._misses)

    def clear(self) -> tuple[int, int]:
        """Drops every entry and resets the counters; returns (entries, bytes) dropped."""
        _, size = self._store.stats()
        count = self._store.clear()
        with self._lock:
            self._hits = self._misses = 0
        return count, size
