"""Scrubbing is linear in the text: 4x the text costs at most 5x the CPU time (this thread's, not wall clock, so
other work on the machine does not count), on the texts that were quadratic and on ordinary ones. bench/scrub.py
measures the time per MB."""

from __future__ import annotations

import gc
import time

import pytest
from zengram.kernel.content import Scrubber

from tests.support import REPO_ROOT

SMALL = 20_000
RATIO = 5.0
ADVERSARIAL = ["token=", "Password=hunter2; ", "https://u:p@", "a(token="]


def cpu_seconds(scrubber: Scrubber, text: str) -> float:
    """The least CPU time of this thread over three scrubs (the others were disturbed by something else), with the
    garbage collector held off: a full collection of the test process's heap costs milliseconds of this thread's
    time wherever it falls, which is noise of the same order as a small text's scrub."""
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            start = time.thread_time()
            scrubber.scrub(text)
            best = min(best, time.thread_time() - start)
    finally:
        gc.enable()
    return max(best, 1e-4)


def repeated(seed: str, size: int) -> str:
    return (seed * (size // len(seed) + 1))[:size]


@pytest.mark.parametrize("seed", ADVERSARIAL)
def test_adversarial_texts_scrub_in_linear_time(seed: str) -> None:
    scrubber = Scrubber(b"k" * 32)
    small, large = cpu_seconds(scrubber, repeated(seed, SMALL)), cpu_seconds(scrubber, repeated(seed, 4 * SMALL))
    assert large / small <= RATIO, f"{seed!r}: {small * 1000:.1f} ms -> {large * 1000:.1f} ms for 4x the text"


def test_ordinary_text_scrubs_in_linear_time() -> None:
    prose = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    scrubber = Scrubber(b"k" * 32)
    small, large = cpu_seconds(scrubber, repeated(prose, SMALL)), cpu_seconds(scrubber, repeated(prose, 4 * SMALL))
    assert large / small <= RATIO
