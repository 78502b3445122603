"""An HNSW graph (usearch) over the rows of the embedded index's vector matrix: derived state, rebuilt on open.

It proposes candidates only: the index re-scores them exactly from its float32 matrix, so the graph stores
half-precision vectors. Keys are matrix row numbers. The graph is built in a background thread; until it is
ready, searches use the exact scan and the rows written meanwhile are queued, then applied when the build ends.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

logger = logging.getLogger(__name__)

_BUILD_BATCH = 1024  # rows added per call while building, so `close()` can stop a build between batches


@dataclass(frozen=True)
class HnswParameters:
    """Chosen by measurement on the 100k benchmark store (docs/decisions/0036-hnsw-above-a-threshold.md): with
    exact re-scoring, recall@10 against the exact scan 0.995 for ~1 ms of search (connectivity 16 with
    expansion_search 128: 0.974)."""

    connectivity: int = 32
    expansion_add: int = 200
    expansion_search: int = 256


@dataclass(frozen=True)
class GraphRows:
    """What the graph reads from the matrix: its current rows, each one's vector and whether it is alive."""

    size: int
    vectors: npt.NDArray[np.float32]
    alive: npt.NDArray[np.bool_]


class HnswGraph:
    """Approximate nearest rows by inner product (the vectors are unit length, so cosine).

    usearch does not document concurrent add/remove beside search for its Python binding, so every call to the
    graph after the build holds one lock; a search takes ~1 ms, far less than the scan it replaces.
    """

    def __init__(self, dimension: int, parameters: HnswParameters | None = None) -> None:
        from usearch.index import Index  # lazy: only stores above the ANN threshold need it

        chosen = parameters or HnswParameters()
        self._graph: Any = Index(ndim=dimension, metric="ip", dtype="f16", connectivity=chosen.connectivity,
                                 expansion_add=chosen.expansion_add, expansion_search=chosen.expansion_search)
        self._lock = threading.Lock()
        self._queued: set[int] | None = set()  # rows changed during the build; None once the graph is ready
        self._stopping = threading.Event()
        self.ready = threading.Event()
        self._thread: threading.Thread | None = None

    def start_build(self, rows: Callable[[], GraphRows], *, background: bool) -> None:
        """Builds the graph from the matrix as `rows()` shows it when the build starts (in a thread when
        `background`); later changes arrive through `changed`."""
        if not background:
            self._build(rows)
            return
        self._thread = threading.Thread(target=self._build, args=(rows,), name="zengram-hnsw-build", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stopping.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def changed(self, rows: Iterable[int], current: GraphRows) -> None:
        """Rows whose vector was set, replaced, or removed (dead in `current`): the graph follows."""
        with self._lock:
            if self._queued is not None:
                self._queued.update(rows)
                return
            for row in rows:
                self._apply(row, current)

    def nearest_rows(self, query: npt.NDArray[np.float32], count: int) -> npt.NDArray[np.int64] | None:
        """Up to `count` candidate rows nearest `query`; None while the graph is being built."""
        if not self.ready.is_set():
            return None
        with self._lock:
            matches = self._graph.search(query, count, threads=1)
        return np.asarray(matches.keys, dtype=np.int64)

    def __len__(self) -> int:
        return len(self._graph)

    def _build(self, rows: Callable[[], GraphRows]) -> None:
        try:
            seen = rows()
            alive = np.flatnonzero(seen.alive[: seen.size])
            for start in range(0, alive.size, _BUILD_BATCH):
                if self._stopping.is_set():
                    return
                batch = alive[start:start + _BUILD_BATCH]
                # threads=1: the build shares the host's cores with the searches it is meant to speed up
                self._graph.add(batch.astype(np.uint64), seen.vectors[batch], threads=1)
            with self._lock:
                current = rows()
                for row in sorted(self._queued or ()):
                    self._apply(row, current)
                self._queued = None
            self.ready.set()
        except Exception:  # the exact scan keeps answering: a failed build costs speed, never results
            logger.exception("building the HNSW vector graph failed; vector searches stay exact")

    def _apply(self, row: int, current: GraphRows) -> None:
        if row in self._graph:
            self._graph.remove(row)
        if row < current.size and current.alive[row]:
            self._graph.add(row, current.vectors[row])
