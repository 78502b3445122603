"""The one container of a host, built on first use (never at import time) and shared by every request.

Apart from bootstrap (which wires the container) so a Lambda function's init does not import the wiring, the
settings and every service: the first request (or priming, under SnapStart) does."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zengram.bootstrap import Container


class ContainerProvider:
    """Builds the container on first use (never at import time) and hands the same one to everyone."""

    def __init__(self, factory: Callable[[], Container]) -> None:
        self._factory = factory
        self._container: Container | None = None
        self._lock = threading.Lock()

    def get(self) -> Container:
        if self._container is None:
            with self._lock:
                if self._container is None:
                    self._container = self._factory()
        return self._container

    def close(self) -> None:
        with self._lock:
            if self._container is not None:
                self._container.close()
                self._container = None
