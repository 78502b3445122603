"""The benchmarks' embedders that stand in front of a real one (pooled, replayed, cached vectors) answer for its
model and dimension, so a store built through them is one the real embedder may open."""

from __future__ import annotations

from zengram.kernel.ports import Embedder


class InFrontOf:
    """A base for an `Embedder` in front of `inner`: the model id and dimension are `inner`'s."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dimension(self) -> int:
        return self._inner.dimension
