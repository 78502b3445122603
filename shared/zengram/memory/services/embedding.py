"""A small LRU cache in front of the embedder for queries: agents repeat the same searches."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

from zengram.kernel.ports import Embedder

if TYPE_CHECKING:
    from zengram.kernel.ports import Vectors


class QueryVectorCache:
    def __init__(self, embedder: Embedder, capacity: int = 1024) -> None:
        self._embedder = embedder
        self._capacity = capacity
        self._vectors: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()

    def vector(self, text: str) -> Vectors:
        with self._lock:
            cached: Vectors | None = self._vectors.get(text)
            if cached is not None:
                self._vectors.move_to_end(text)
                return cached
        vector: Vectors = self._embedder.embed([text])[0]
        with self._lock:
            self._vectors[text] = vector
            if len(self._vectors) > self._capacity:
                self._vectors.popitem(last=False)
        return vector
