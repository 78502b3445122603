"""What a host builds on first use (never at import time) and shares with every request: its container, the
documents' container.

Apart from the wiring, so a Lambda function's init does not import the wiring, the settings and every service: the
first request (or priming, under SnapStart) does."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Lazy(Generic[T]):
    """Builds its value on first use (never at import time) and hands the same one to everyone."""

    def __init__(self, factory: Callable[[], T], close: Callable[[T], None] | None = None) -> None:
        self._factory = factory
        self._close = close
        self._value: T | None = None
        self._lock = threading.Lock()

    def get(self) -> T:
        if self._value is None:
            with self._lock:
                if self._value is None:
                    self._value = self._factory()
        return self._value

    def peek(self) -> T | None:
        """The value if it has been built, else None (building nothing)."""
        return self._value

    def close(self) -> None:
        with self._lock:
            if self._value is not None and self._close is not None:
                self._close(self._value)
            self._value = None
