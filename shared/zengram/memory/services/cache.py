"""A value kept in process for a while: other processes' writes show up after at most `seconds`."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Expiring(Generic[T]):
    """Loads the value at most once every `seconds`; `invalidate` forces the next `get` to reload it.

    One loader at a time: concurrent readers wait for its value instead of loading their own.
    """

    def __init__(self, load: Callable[[], T], seconds: float, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._load, self._seconds, self._monotonic = load, seconds, monotonic
        self._lock = threading.Lock()
        self._value: T | None = None
        self._loaded_at = 0.0

    def get(self) -> T:
        with self._lock:
            if self._value is None or self._monotonic() - self._loaded_at >= self._seconds:
                self._value, self._loaded_at = self._load(), self._monotonic()
            return self._value

    def peek(self) -> T | None:
        """The value held now, loaded or not expired or not: None when there is none (nothing is loaded here)."""
        with self._lock:
            return self._value

    def invalidate(self) -> None:
        with self._lock:
            self._value = None
