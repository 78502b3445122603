"""Running a job on a daemon thread of this process (the embedded host)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

logger = logging.getLogger(__name__)


class ThreadJobLauncher:
    """`launch` starts `run_here(job_id)` on a daemon thread: the server answers at once, the job runs on. A
    process that stops mid-run leaves the job's lock to expire (the next run then marks the job failed)."""

    def __init__(self) -> None:
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def launch(self, job_id: str, run_here: Callable[[str], object]) -> None:
        thread = threading.Thread(target=self._run, args=(job_id, run_here), name=f"zengram-job-{job_id[:8]}",
                                  daemon=True)
        with self._lock:
            self._threads = [alive for alive in self._threads if alive.is_alive()] + [thread]
        thread.start()

    def join(self, timeout: float | None = None) -> None:
        """Waits for the jobs started so far (tests, and a graceful shutdown)."""
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)

    @staticmethod
    def _run(job_id: str, run_here: Callable[[str], object]) -> None:
        try:
            run_here(job_id)
        except Exception:  # the job records its own failure; this only keeps the thread from dying loudly
            logger.exception("background job %s failed", job_id)
