"""Bringing a function of the local cloud to its warm state before a test depends on its timing."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def warmed(send: Callable[[], T], ready: Callable[[T], bool], attempts: int = 4) -> T:
    """`send()` until `ready` takes its answer, at most `attempts` times: a function's first call in the local cloud
    starts its container and runs its init inside the invocation's timeout, which a loaded machine can exceed
    (SAM then answers 502 and the next call starts over). What a provisioned function would have done first."""
    answer = send()
    for _ in range(attempts - 1):
        if ready(answer):
            break
        answer = send()
    return answer
