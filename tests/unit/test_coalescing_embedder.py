"""CoalescingEmbedder: concurrent callers share forward passes and each gets exactly its own rows back.

The inner embedder here is a counting fake whose first pass can be held open, so the tests arrange
"callers arrive while a pass runs" with events, not with timing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import numpy.typing as npt
import pytest
from zengram.adapters.system.coalescing_embedder import CoalescingEmbedder
from zengram.kernel.ports import Embedder

from tests.support import HashingEmbedder

WAIT = 30.0  # seconds before a test gives up on an event that must happen (a hang, not a timing assert)


class GatedEmbedder:
    """Wraps HashingEmbedder; records every pass; the first pass waits until `release` is set."""

    def __init__(self, *, fail_on: str | None = None) -> None:
        self._real = HashingEmbedder()
        self.passes: list[list[str]] = []
        self.first_pass_started = threading.Event()
        self.release = threading.Event()
        self._fail_on = fail_on
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self._real.model_id

    @property
    def dimension(self) -> int:
        return self._real.dimension

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        with self._lock:
            self.passes.append(list(texts))
            first = len(self.passes) == 1
        if first:
            self.first_pass_started.set()
            assert self.release.wait(WAIT), "the test never released the first pass"
        if self._fail_on is not None and self._fail_on in texts:
            raise ValueError(f"cannot embed {self._fail_on!r}")
        return self._real.embed(texts)


def wait_until(condition: Callable[[], bool]) -> None:
    event = threading.Event()
    for _ in range(int(WAIT / 0.005)):
        if condition():
            return
        event.wait(0.005)
    raise AssertionError("condition never became true")


def queued(embedder: CoalescingEmbedder) -> int:
    return len(embedder._queue)


def callers_during_a_held_pass(
    inner: GatedEmbedder, coalescing: CoalescingEmbedder, batches: list[list[str]], pool: ThreadPoolExecutor
) -> tuple[Future[npt.NDArray[np.float32]], list[Future[npt.NDArray[np.float32]]]]:
    """The first call starts a pass and is held; the others queue behind it; then the pass is released."""
    first = pool.submit(coalescing.embed, ["first caller"])
    assert inner.first_pass_started.wait(WAIT)
    later = [pool.submit(coalescing.embed, texts) for texts in batches]
    wait_until(lambda: queued(coalescing) == len(batches))
    inner.release.set()
    return first, later


def test_a_lone_caller_runs_at_once_in_its_own_pass() -> None:
    inner = GatedEmbedder()
    inner.release.set()
    coalescing = CoalescingEmbedder(inner)
    vectors = coalescing.embed(["alone", "with a second text"])
    assert inner.passes == [["alone", "with a second text"]]
    assert coalescing.passes == 1
    np.testing.assert_array_equal(vectors, HashingEmbedder().embed(["alone", "with a second text"]))


def test_callers_arriving_during_a_pass_share_the_next_one() -> None:
    inner = GatedEmbedder()
    coalescing = CoalescingEmbedder(inner)
    batches = [[f"write {n}"] for n in range(6)] + [["import a", "import b", "import c"]]
    with ThreadPoolExecutor(max_workers=8) as pool:
        first, later = callers_during_a_held_pass(inner, coalescing, batches, pool)
        results = [future.result(WAIT) for future in later]
        first.result(WAIT)
    # Two passes for eight callers: the first caller's, then everyone who queued meanwhile.
    assert coalescing.passes == 2
    assert inner.passes[0] == ["first caller"]
    assert sorted(inner.passes[1]) == sorted(text for texts in batches for text in texts)
    for texts, vectors in zip(batches, results, strict=True):
        np.testing.assert_array_equal(vectors, HashingEmbedder().embed(texts))  # its own rows, in its order


def test_a_merged_pass_is_capped_and_the_rest_wait_for_the_next() -> None:
    inner = GatedEmbedder()
    coalescing = CoalescingEmbedder(inner, max_batch_texts=4)
    batches = [[f"text {n}a", f"text {n}b"] for n in range(4)]  # 8 texts queued, 4 per pass
    with ThreadPoolExecutor(max_workers=6) as pool:
        first, later = callers_during_a_held_pass(inner, coalescing, batches, pool)
        results = [future.result(WAIT) for future in later]
        first.result(WAIT)
    assert [len(texts) for texts in inner.passes] == [1, 4, 4]
    assert inner.passes[1] == batches[0] + batches[1]  # oldest first
    for texts, vectors in zip(batches, results, strict=True):
        np.testing.assert_array_equal(vectors, HashingEmbedder().embed(texts))


def test_a_call_larger_than_the_cap_still_runs_whole() -> None:
    inner = GatedEmbedder()
    inner.release.set()
    coalescing = CoalescingEmbedder(inner, max_batch_texts=2)
    texts = [f"import {n}" for n in range(5)]
    np.testing.assert_array_equal(coalescing.embed(texts), HashingEmbedder().embed(texts))
    assert inner.passes == [texts]


def test_two_parallel_passes_let_a_second_caller_start_without_waiting() -> None:
    inner = GatedEmbedder()
    coalescing = CoalescingEmbedder(inner, max_parallel_passes=2)
    with ThreadPoolExecutor(max_workers=2) as pool:
        held = pool.submit(coalescing.embed, ["held"])
        assert inner.first_pass_started.wait(WAIT)
        # The first pass is still held: this call can only finish if it ran in a pass of its own.
        second = coalescing.embed(["runs beside it"])
        inner.release.set()
        held.result(WAIT)
    np.testing.assert_array_equal(second, HashingEmbedder().embed(["runs beside it"]))
    assert inner.passes == [["held"], ["runs beside it"]]


def test_one_callers_failure_does_not_fail_the_callers_merged_with_it() -> None:
    inner = GatedEmbedder(fail_on="poison")
    coalescing = CoalescingEmbedder(inner)
    batches = [["good one"], ["poison"], ["good two"]]
    with ThreadPoolExecutor(max_workers=4) as pool:
        first, later = callers_during_a_held_pass(inner, coalescing, batches, pool)
        first.result(WAIT)
        good_one, poisoned, good_two = later
        np.testing.assert_array_equal(good_one.result(WAIT), HashingEmbedder().embed(["good one"]))
        np.testing.assert_array_equal(good_two.result(WAIT), HashingEmbedder().embed(["good two"]))
        with pytest.raises(ValueError, match="poison"):
            poisoned.result(WAIT)
    # the merged pass failed, then each caller was retried alone
    assert inner.passes[1:] == [["good one", "poison", "good two"], ["good one"], ["poison"], ["good two"]]


def test_empty_input_makes_no_pass() -> None:
    inner = GatedEmbedder()
    coalescing = CoalescingEmbedder(inner)
    vectors = coalescing.embed([])
    assert vectors.shape == (0, inner.dimension) and vectors.dtype == np.float32
    assert inner.passes == []


def test_keeps_the_embedder_port() -> None:
    coalescing = CoalescingEmbedder(HashingEmbedder())
    assert isinstance(coalescing, Embedder)
    assert coalescing.model_id == HashingEmbedder().model_id
    assert coalescing.dimension == HashingEmbedder().dimension


@pytest.mark.parametrize("options", [{"max_parallel_passes": 0}, {"max_batch_texts": 0}])
def test_refuses_settings_that_could_never_run(options: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        CoalescingEmbedder(HashingEmbedder(), **options)
