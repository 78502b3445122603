"""Small helpers of the end-to-end suite: a namespace per test (every test shares one cloud), and waiting for what
the search index shows only once refreshed."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def unique(prefix: str) -> str:
    """A name no other test (nor an earlier run against a reused cloud) uses: a client id, a subject, a key."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def eventually(read: Callable[[], T], accept: Callable[[T], bool], *, seconds: float = 30,
               interval: float = 0.25) -> T:
    """`read()` until `accept` takes its answer (the index is near-real-time); the last answer otherwise, for the
    caller's assertion to show."""
    deadline = time.monotonic() + seconds
    while True:
        answer = read()
        if accept(answer) or time.monotonic() > deadline:
            return answer
        time.sleep(interval)
