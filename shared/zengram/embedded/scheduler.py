"""The embedded host's timer for scheduled work (consolidation): a daemon thread that ticks every period."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import timedelta

logger = logging.getLogger(__name__)


class PeriodicTask:
    """Calls `tick` every `period`, counted from `start` (not aligned to clock times), until `stop`. A tick
    that raises is logged and the timer carries on; a tick still running at `stop` is not interrupted."""

    def __init__(self, period: timedelta, tick: Callable[[], object], *, name: str) -> None:
        self._period = period.total_seconds()
        self._tick = tick
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    @property
    def period(self) -> timedelta:
        return timedelta(seconds=self._period)

    def run_once(self) -> None:
        """One tick now, in the caller's thread (what the timer does every period)."""
        self._tick()

    def _loop(self) -> None:
        while not self._stopping.wait(self._period):
            try:
                self._tick()
            except Exception:
                logger.exception("scheduled task %s failed", self._thread.name)
