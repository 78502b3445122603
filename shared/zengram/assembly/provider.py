"""The host's container, built on first use (never at import time) and shared by every request.

Apart from `zengram.assembly.containers`, so a Lambda function's init does not import the wiring, the settings and
every service: the first request (or priming, under SnapStart) does."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from zengram.kernel.lazy import Lazy

if TYPE_CHECKING:
    from zengram.assembly.containers import Container


class ContainerProvider(Lazy["Container"]):
    """A `Lazy` container that closes the container it built."""

    def __init__(self, factory: Callable[[], Container]) -> None:
        super().__init__(factory, close=lambda container: container.close())
