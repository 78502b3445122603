"""Indexing jobs on one worker thread of this process (the embedded host): queued jobs run one after another."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

logger = logging.getLogger(__name__)
_Work = tuple[str, Callable[[str], object]] | None


class ThreadIndexWorker:
    """The `IndexJobLauncher` port: `launch` queues the job; a daemon thread, started on first use, runs the queue
    in order. `close` lets the running job finish its current file's worth of work and stops the thread."""

    def __init__(self) -> None:
        self._queue: queue.Queue[_Work] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._idle = threading.Event()
        self._idle.set()

    def launch(self, job_id: str, run_here: Callable[[str], object]) -> None:
        with self._lock:
            self._idle.clear()
            self._queue.put((job_id, run_here))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="zengram-kb-indexer", daemon=True)
                self._thread.start()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Blocks until every queued job has run (tests, benchmarks); False on timeout."""
        return self._idle.wait(timeout)

    def close(self) -> None:
        with self._lock:
            thread = self._thread
            self._queue.put(None)
        if thread is not None:
            thread.join(timeout=30)

    def _serve(self) -> None:
        while True:
            work = self._queue.get()
            if work is None:
                return
            job_id, run_here = work
            try:
                run_here(job_id)
            except Exception:  # the job records its own failure; this keeps the worker alive for the next one
                logger.exception("indexing job %s failed", job_id)
            finally:
                with self._lock:
                    if self._queue.empty():
                        self._idle.set()
