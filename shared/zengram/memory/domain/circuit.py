"""A circuit breaker: after a dependency failed, stop calling it for a while instead of waiting on it each time.

Pure: it is told the time (`datetime`s from the caller's clock), so tests drive it without sleeping.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum


class CircuitState(StrEnum):
    CLOSED = "closed"  # calls go through
    OPEN = "open"  # calls fail at once until the cool-down is over
    HALF_OPEN = "half_open"  # one probe call is under way; the others still fail at once


@dataclass(frozen=True)
class CircuitStatus:
    state: CircuitState
    last_error: str | None  # why the last call failed (None once a call succeeded)
    retry_at: datetime | None  # when an open circuit lets the next probe through


class CircuitBreaker:
    """Closed, it lets every call through and counts consecutive failures; `failures_to_open` of them open it.
    Open, it refuses calls for `open_for`; then it lets one probe through (half-open): the probe's success
    closes it, its failure opens it again for another `open_for`. Thread-safe."""

    def __init__(self, *, failures_to_open: int, open_for: timedelta) -> None:
        if failures_to_open < 1:
            raise ValueError("failures_to_open must be at least 1")
        self._failures_to_open = failures_to_open
        self._open_for = open_for
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: datetime | None = None
        self._probing = False
        self._last_error: str | None = None

    def allow(self, now: datetime) -> bool:
        """Whether a call may go out now. True while closed; when open, True for exactly one caller once the
        cool-down is over (that caller must then report `succeeded` or `failed`)."""
        with self._lock:
            if self._opened_at is None:
                return True
            if self._probing or now < self._opened_at + self._open_for:
                return False
            self._probing = True
            return True

    def succeeded(self) -> None:
        with self._lock:
            self._failures, self._opened_at, self._probing, self._last_error = 0, None, False, None

    def failed(self, error: str, now: datetime) -> None:
        with self._lock:
            self._failures += 1
            self._last_error = error
            if self._probing or self._failures >= self._failures_to_open:
                self._opened_at, self._probing = now, False

    def status(self, now: datetime) -> CircuitStatus:
        with self._lock:
            if self._opened_at is None:
                return CircuitStatus(CircuitState.CLOSED, self._last_error, None)
            state = CircuitState.HALF_OPEN if self._probing else CircuitState.OPEN
            return CircuitStatus(state, self._last_error, self._opened_at + self._open_for)
