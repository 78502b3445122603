"""The embedded host's `LearningDispatch`: one daemon thread working through a bounded queue of job ids.

Jobs are stored before they are dispatched, so the queue only says "this one is ready": when it is full the job
waits in the store, and the worker's sweep (every `sweep_seconds`, and when it starts) runs whatever is due there:
jobs a full queue left behind, retries after a failure, and jobs a stopped process never finished.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import queue
import threading
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)
_STOP = ""


class LearningWorker:
    def __init__(self, run: Callable[[str], object], run_due: Callable[[], int], *, queue_size: int = 100,
                 sweep_seconds: float = 5.0) -> None:
        self._run = run
        self._run_due = run_due
        self._queue: queue.Queue[str] = queue.Queue(maxsize=queue_size)
        self._sweep_seconds = sweep_seconds
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._busy = threading.Event()  # set while a job or a sweep runs
        self._stopping = False

    def start(self) -> None:
        """Starts the thread (once); its first act is a sweep of the store."""
        with self._lock:
            if self._thread is None and not self._stopping:
                self._thread = threading.Thread(target=self._loop, name="zengram-learning", daemon=True)
                self._thread.start()

    def dispatch(self, job_id: str) -> None:
        self.start()
        try:
            self._queue.put_nowait(job_id)
        except queue.Full:
            logger.warning("learning queue full (%d jobs); job %s waits in the store for the next sweep",
                           self._queue.maxsize, job_id)

    def idle(self) -> bool:
        """Nothing queued and nothing running (a sweep may still find due work later)."""
        return self._queue.empty() and not self._busy.is_set()

    def stop(self, timeout: float = 10.0) -> None:
        """Lets the running job finish; queued ids stay in the store and run after the next start."""
        with self._lock:
            self._stopping = True
            thread = self._thread
        if thread is None:
            return
        while True:  # make room for the stop mark: what is dropped is stored and runs after a restart
            try:
                self._queue.put_nowait(_STOP)
                break
            except queue.Full:
                with contextlib.suppress(queue.Empty):
                    self._queue.get_nowait()
        thread.join(timeout)

    def _loop(self) -> None:
        swept = -math.inf
        while True:
            if time.monotonic() - swept >= self._sweep_seconds:  # also while busy: retries must not starve
                self._guarded(self._run_due)
                swept = time.monotonic()
            try:
                job_id = self._queue.get(timeout=self._sweep_seconds)
            except queue.Empty:
                continue
            if job_id == _STOP or self._stopping:
                return
            self._guarded(functools.partial(self._run, job_id))

    def _guarded(self, work: Callable[[], object]) -> None:
        self._busy.set()
        try:
            work()
        except Exception:  # a job records its own failure; this keeps the worker alive
            logger.exception("learning worker: unexpected failure")
        finally:
            self._busy.clear()
