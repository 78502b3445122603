"""An HNSW graph (usearch) over the rows of the embedded index's vector matrix: derived state, rebuilt on open.

It proposes candidates only: the index re-scores them exactly from its float32 matrix, so the graph stores
int8 vectors. Keys are matrix row numbers. One background thread per graph builds it, then keeps it following
the matrix: a write only queues the rows it changed (an insert costs ~0.25–0.5 ms of CPU at 100k rows, which
would make writes slower as the store grows), and until a queued row is applied, every search proposes it as a
candidate, so it is scored exactly like the rest (docs/decisions/0038-index-maintenance-off-the-write-path.md).
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

logger = logging.getLogger(__name__)

_BUILD_BATCH = 1024  # rows added per call while building, so `close()` can stop a build between batches
_APPLY_BATCH = 32  # queued rows applied per hold of the graph lock, so searches interleave with a long queue
# How long the maintainer waits, once a row is queued, for the rows of the next writes (up to a batch), so it
# inserts them in one go: inserted one write at a time they cost ~25 % more CPU at 100k rows (measured; probably
# each insert finding the graph out of the cache) and wake the maintainer once per write. Searches meanwhile
# propose the waiting rows as candidates, scored exactly (a few dozen vectors), so the wait never changes a result.
GATHER_SECONDS = 0.5
# Past this many queued rows (a bulk import), proposing them all costs more than the exact scan it replaces.
MAX_UNAPPLIED_CANDIDATES = 4096


# Graphs whose maintainer may be inside usearch when the interpreter exits: stopped first, because a daemon thread
# ended by the interpreter's finalisation inside usearch's C++ frames aborts the process ("terminate called").
_open_graphs: weakref.WeakSet[HnswGraph] = weakref.WeakSet()


@atexit.register
def _stop_maintainers() -> None:
    for graph in list(_open_graphs):
        graph.close()


@dataclass(frozen=True)
class HnswParameters:
    """Chosen by measurement on the 100k benchmark store (docs/decisions/0036-hnsw-above-a-threshold.md): with
    exact re-scoring, recall@10 against the exact scan ~0.997 on 1,000 queries for ~0.4 ms of search. An
    expansion_add of 128 rather than 200 gives up 0.001 of that recall for inserts and builds ~40 % cheaper; int8
    rather than half-precision vectors (usearch scales each to unit length × 127) makes inserts ~45 % and searches
    ~35 % cheaper again, with the same recall."""

    connectivity: int = 32
    expansion_add: int = 128
    expansion_search: int = 256
    dtype: str = "i8"


@dataclass(frozen=True)
class GraphRows:
    """What the graph reads from the matrix: its current rows, each one's vector and whether it is alive."""

    size: int
    vectors: npt.NDArray[np.float32]
    alive: npt.NDArray[np.bool_]


class HnswGraph:
    """Approximate nearest rows by inner product (the vectors are unit length, so cosine).

    usearch does not document concurrent add/remove beside search for its Python binding, so every call to the
    graph holds `_graph_lock`; a search takes ~1 ms, far less than the scan it replaces. The rows changed but not
    yet in the graph (`_queued`, then `_applying`) are guarded by `_queue`, a condition the maintainer waits on.
    """

    def __init__(self, dimension: int, parameters: HnswParameters | None = None) -> None:
        from usearch.index import Index  # lazy: only stores above the ANN threshold need it

        chosen = parameters or HnswParameters()
        self._graph: Any = Index(ndim=dimension, metric="ip", dtype=chosen.dtype, connectivity=chosen.connectivity,
                                 expansion_add=chosen.expansion_add, expansion_search=chosen.expansion_search)
        self._graph_lock = threading.Lock()
        self._queue = threading.Condition()
        self._queued: dict[int, None] = {}  # rows changed and not yet taken by the maintainer, in order
        self._applying: tuple[int, ...] = ()  # rows the maintainer is putting into the graph now
        self._rows: Callable[[], GraphRows] | None = None
        self._saved: Path | None = None
        self._stopping = threading.Event()
        self.ready = threading.Event()
        self._abandoned = False  # the build or an apply failed: exact scans from now on, changes are not kept
        self._thread: threading.Thread | None = None
        _open_graphs.add(self)

    def start_build(self, rows: Callable[[], GraphRows], *, background: bool, saved: Path | None = None) -> None:
        """Builds the graph from the matrix as `rows()` shows it when the build starts (in the maintainer thread
        when `background`), then follows the rows that `changed` names, reading them from `rows()`. `saved`: a
        graph `save` wrote over these very rows (the caller vouches for that), loaded instead of built when it
        holds as many rows as are alive."""
        self._rows = rows
        self._saved = saved
        if not background:
            self._build(rows)
        self._thread = threading.Thread(target=self._maintain, args=(rows if background else None,),
                                        name="zengram-hnsw", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stopping.set()
        with self._queue:
            self._queue.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def changed(self, rows: Iterable[int]) -> None:
        """Rows whose vector was set, replaced, or removed: queued for the maintainer, which reads their current
        state when it applies them. Costs the write a set insertion, whatever the graph's size."""
        with self._queue:
            if self._abandoned:
                return  # nothing will apply them
            for row in rows:
                self._queued.pop(row, None)  # re-queued at the end: applied after the rows changed before it
                self._queued[row] = None
            self._queue.notify()

    def nearest_rows(self, query: npt.NDArray[np.float32], count: int) -> npt.NDArray[np.int64] | None:
        """Up to `count` candidate rows nearest `query`, plus every row changed but not yet applied; None while
        the graph is being built, or when too many rows wait to be applied (the exact scan answers then)."""
        if not self.ready.is_set():
            return None
        # The waiting rows are read before the graph is asked: a row applied in between is in the graph then.
        unapplied = self.unapplied_rows()
        if len(unapplied) > MAX_UNAPPLIED_CANDIDATES:
            return None
        with self._graph_lock:
            matches = self._graph.search(query, count, threads=1)
        found = np.asarray(matches.keys, dtype=np.int64)
        if not unapplied:
            return found
        return np.union1d(found, np.fromiter(unapplied, dtype=np.int64, count=len(unapplied)))

    def unapplied_rows(self) -> list[int]:
        """Rows changed since the graph last took them in (queued or being applied)."""
        with self._queue:
            return [*self._applying, *self._queued]

    def wait_until_applied(self, timeout: float) -> bool:
        """Whether the graph is built and holds every change, waiting up to `timeout` seconds (benchmarks and
        tests; serving never waits)."""
        if not self.ready.wait(timeout):
            return False
        with self._queue:
            drained = self._queue.wait_for(lambda: not self._queued and not self._applying, timeout)
        return drained and self.ready.is_set()  # a failed apply leaves the graph unready: not "holding" anything

    def __len__(self) -> int:
        return len(self._graph)

    def save(self, path: Path, timeout: float) -> bool:
        """Writes the graph to `path` (whole, or not at all) once it holds every change, waiting up to `timeout`
        seconds for that; False when it is not built, was abandoned or still lags. Only `close` makes it final:
        a change after the save is not in the file."""
        if not self.ready.is_set() or not self.wait_until_applied(timeout):  # a build under way is not waited for
            return False
        partial = path.with_name(path.name + ".partial")
        with self._graph_lock:
            if self.unapplied_rows() or not self.ready.is_set():
                return False
            self._graph.save(str(partial))
        os.replace(partial, path)
        return True

    def _maintain(self, rows_to_build: Callable[[], GraphRows] | None) -> None:
        if rows_to_build is not None:
            self._build(rows_to_build)
        while self.ready.is_set() and not self._stopping.is_set():
            with self._queue:
                self._queue.wait_for(lambda: bool(self._queued) or self._stopping.is_set())
                batch_is_full = len(self._queued) >= _APPLY_BATCH
            if not batch_is_full:
                self._stopping.wait(GATHER_SECONDS)  # more rows arrive meanwhile: one lock hold applies them all
            if self._stopping.is_set():
                return  # derived state: what is still queued dies with the graph
            with self._queue:
                batch = tuple(self._queued)[:_APPLY_BATCH]
                for row in batch:
                    del self._queued[row]
                self._applying = batch
            self._apply_batch(batch)
            with self._queue:
                self._applying = ()
                self._queue.notify_all()

    def _build(self, rows: Callable[[], GraphRows]) -> None:
        try:
            seen = rows()
            alive = np.flatnonzero(seen.alive[: seen.size])
            if self._saved is not None and self._load(self._saved, alive.size):
                self.ready.set()
                return
            for start in range(0, alive.size, _BUILD_BATCH):
                if self._stopping.is_set():
                    return
                batch = alive[start:start + _BUILD_BATCH]
                # threads=1: the build shares the host's cores with the searches it is meant to speed up
                with self._graph_lock:
                    self._graph.add(batch.astype(np.uint64), seen.vectors[batch], threads=1)
            self.ready.set()  # the rows changed meanwhile are queued: the maintainer applies them next
        except Exception:  # the exact scan keeps answering: a failed build costs speed, never results
            self._abandon()
            logger.exception("building the HNSW vector graph failed; vector searches stay exact")

    def _load(self, path: Path, alive: int) -> bool:
        """Whether the saved graph at `path` was loaded (it holds `alive` rows); else the graph stays empty."""
        try:
            with self._graph_lock:
                self._graph.load(str(path))
                if len(self._graph) == alive:
                    logger.info("HNSW vector graph of %d rows loaded from %s", alive, path.name)
                    return True
                self._graph.reset()
            logger.info("the saved HNSW vector graph holds other rows; building it again")
        except Exception as error:  # a missing or unreadable file: built as if there were none
            logger.warning("the saved HNSW vector graph could not be loaded (%s); building it again", error)
        return False

    def _apply_batch(self, batch: tuple[int, ...]) -> None:
        if self._rows is None or not batch:
            return
        try:
            current = self._rows()
            with self._graph_lock:
                for row in batch:
                    self._apply(row, current)
        except Exception:  # a graph missing rows could hide them: searches go back to the exact scan for good
            self._abandon()
            logger.exception("applying changed rows to the HNSW vector graph failed; vector searches stay exact")

    def _abandon(self) -> None:
        """Out of use for good: searches take the exact scan, and changed rows are no longer kept for an apply."""
        self.ready.clear()
        with self._queue:
            self._abandoned = True
            self._queued.clear()
            self._queue.notify_all()

    def _apply(self, row: int, current: GraphRows) -> None:
        if row in self._graph:
            self._graph.remove(row)
        if row < current.size and current.alive[row]:
            self._graph.add(row, current.vectors[row])
