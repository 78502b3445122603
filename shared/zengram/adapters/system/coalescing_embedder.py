"""Merges concurrent `embed` calls into shared forward passes (group commit for an in-process model).

A caller that finds a free pass runs at once, alone: no waiting window, no added latency when traffic is
light. Callers that arrive while every pass is busy queue up; when a pass ends, one of them takes the
whole queue (up to `max_batch_texts`) into the next pass, and each gets its own rows back. So N writers
or importers at once cost about N/batch passes instead of N, and a batched pass costs less per text.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from zengram.kernel.ports import Embedder

Vectors = npt.NDArray[np.float32]


@dataclass(eq=False)
class _Request:
    texts: list[str]
    taken: bool = False  # in a pass that has not finished yet
    vectors: Vectors | None = None
    error: BaseException | None = None
    settled: bool = False


class CoalescingEmbedder:
    """The `Embedder` port around another one, whose passes it shares between concurrent callers.

    The contract holds as long as the inner embedder's does: a text's vector does not depend on the
    batch it is in, so merging callers changes no result. A failing merged pass is retried one caller
    at a time, so one caller's bad input never fails another's call.
    """

    def __init__(self, inner: Embedder, *, max_parallel_passes: int = 1, max_batch_texts: int = 64) -> None:
        if max_parallel_passes < 1 or max_batch_texts < 1:
            raise ValueError("max_parallel_passes and max_batch_texts must be at least 1")
        self.inner = inner
        self._max_parallel_passes = max_parallel_passes
        self._max_batch_texts = max_batch_texts
        self._queue: deque[_Request] = deque()
        self._passes_running = 0
        self._changed = threading.Condition()
        self.passes = 0  # inner `embed` calls made, for tests and benchmarks

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.empty((0, self.dimension), dtype=np.float32)
        request = _Request(list(texts))
        with self._changed:
            self._queue.append(request)
        while True:
            with self._changed:
                while not request.settled and (request.taken or self._passes_running >= self._max_parallel_passes):
                    self._changed.wait()
                if request.settled:
                    return _outcome(request)
                batch = self._take_batch()
                self._passes_running += 1
            try:
                self._run(batch)
            except BaseException as interrupted:  # e.g. KeyboardInterrupt: nobody may wait forever
                for waiting in batch:
                    if not waiting.settled:
                        self._settle(waiting, error=interrupted)
                raise
            finally:
                with self._changed:
                    self._passes_running -= 1
                    self._changed.notify_all()

    def _take_batch(self) -> list[_Request]:
        """The oldest waiting requests, as many as fit in `max_batch_texts` (always at least one)."""
        batch = [self._queue.popleft()]
        total = len(batch[0].texts)
        while self._queue and total + len(self._queue[0].texts) <= self._max_batch_texts:
            total += len(self._queue[0].texts)
            batch.append(self._queue.popleft())
        for request in batch:
            request.taken = True
        return batch

    def _run(self, batch: list[_Request]) -> None:
        try:
            vectors = self._inner_embed([text for request in batch for text in request.texts])
        except Exception as error:
            if len(batch) == 1:
                self._settle(batch[0], error=error)
                return
            for request in batch:  # find whose texts fail; the others still get their vectors
                self._run([request])
            return
        start = 0
        for request in batch:
            self._settle(request, vectors=vectors[start : start + len(request.texts)].copy())
            start += len(request.texts)

    def _inner_embed(self, texts: list[str]) -> Vectors:
        with self._changed:
            self.passes += 1
        return self.inner.embed(texts)

    def _settle(self, request: _Request, *, vectors: Vectors | None = None,
                error: BaseException | None = None) -> None:
        with self._changed:
            request.vectors, request.error, request.settled = vectors, error, True


def _outcome(request: _Request) -> Vectors:
    if request.error is not None:
        raise request.error
    assert request.vectors is not None
    return request.vectors
