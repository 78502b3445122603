"""The circuit breaker in front of the search index: driven by a hand-moved clock, never by sleeping."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from zengram.adapters.sqlite import EmbeddedSearchIndex
from zengram.kernel.errors import IndexRejected, IndexUnavailable
from zengram.memory.domain.circuit import CircuitBreaker, CircuitState
from zengram.memory.services.index_guard import GuardedIndex

from tests.support import ManualClock

OPEN_FOR = timedelta(seconds=30)


class ScriptedIndex:
    """Counts calls to `count`; raises whatever `next_error` holds (once it is set, until cleared)."""

    def __init__(self) -> None:
        self.calls = 0
        self.next_error: Exception | None = None

    def count(self) -> int:
        self.calls += 1
        if self.next_error is not None:
            raise self.next_error
        return 7


def guarded(failures_to_open: int = 1) -> tuple[GuardedIndex, ScriptedIndex, ManualClock]:
    inner, clock = ScriptedIndex(), ManualClock()
    breaker = CircuitBreaker(failures_to_open=failures_to_open, open_for=OPEN_FOR)
    return GuardedIndex(inner, breaker, clock), inner, clock  # type: ignore[arg-type]


def test_a_failure_opens_the_circuit_and_later_calls_fail_at_once() -> None:
    index, inner, _ = guarded()
    inner.next_error = ConnectionError("connection refused")
    with pytest.raises(IndexUnavailable, match="failed to count: ConnectionError: connection refused"):
        index.count()
    for _ in range(10):
        with pytest.raises(IndexUnavailable, match="unavailable: ConnectionError: connection refused; next try after"):
            index.count()
    assert inner.calls == 1  # the ten calls never reached the index
    assert index.health().state is CircuitState.OPEN


def test_after_the_cool_down_one_probe_goes_through_and_its_success_closes_the_circuit() -> None:
    index, inner, clock = guarded()
    inner.next_error = ConnectionError("down")
    with pytest.raises(IndexUnavailable):
        index.count()
    clock.advance(seconds=29)
    with pytest.raises(IndexUnavailable):
        index.count()
    assert inner.calls == 1

    inner.next_error = None
    clock.advance(seconds=1)
    assert index.count() == 7
    assert index.count() == 7
    assert inner.calls == 3
    assert index.health().state is CircuitState.CLOSED and index.health().last_error is None


def test_a_failed_probe_opens_the_circuit_for_another_cool_down() -> None:
    index, inner, clock = guarded(failures_to_open=3)
    inner.next_error = ConnectionError("down")
    for _ in range(3):
        with pytest.raises(IndexUnavailable):
            index.count()
    clock.advance(seconds=30)
    with pytest.raises(IndexUnavailable, match="failed to count"):  # the probe: it reached the index
        index.count()
    with pytest.raises(IndexUnavailable, match="next try after"):  # open again at once, not after 3 more
        index.count()
    assert inner.calls == 4


def test_while_a_probe_is_under_way_other_callers_fail_at_once() -> None:
    breaker = CircuitBreaker(failures_to_open=1, open_for=OPEN_FOR)
    clock = ManualClock()
    breaker.failed("down", clock.now())
    clock.advance(seconds=31)
    assert breaker.allow(clock.now()) is True  # the probe
    assert breaker.allow(clock.now()) is False
    assert breaker.status(clock.now()).state is CircuitState.HALF_OPEN
    breaker.succeeded()
    assert breaker.allow(clock.now()) is True


def test_failures_below_the_threshold_keep_it_closed_and_a_success_resets_the_count() -> None:
    index, inner, _ = guarded(failures_to_open=2)
    inner.next_error = ConnectionError("blip")
    with pytest.raises(IndexUnavailable):
        index.count()
    inner.next_error = None
    assert index.count() == 7
    inner.next_error = ConnectionError("blip")
    with pytest.raises(IndexUnavailable):
        index.count()
    assert index.health().state is CircuitState.CLOSED


def test_a_refused_request_means_the_index_is_up() -> None:
    index, inner, _ = guarded()
    inner.next_error = IndexRejected("413 content_too_long_exception", {"m1": "too long"})
    for _ in range(3):
        with pytest.raises(IndexRejected):
            index.count()
    assert inner.calls == 3 and index.health().state is CircuitState.CLOSED


@pytest.mark.parametrize("operation", [
    lambda index: index.upsert([]), lambda index: index.delete(["x"]), lambda index: index.set_texts({"x": "t"}),
    lambda index: index.set_attributes({}), lambda index: index.model_id, lambda index: index.clear(),
    lambda index: index.keyword_search("deploy", None, 5), lambda index: index.count(),
])
def test_every_operation_of_the_port_goes_through_the_breaker(tmp_path: Path,
                                                              operation: Callable[[Any], object]) -> None:
    inner = EmbeddedSearchIndex(tmp_path / "index.sqlite3")
    breaker = CircuitBreaker(failures_to_open=1, open_for=OPEN_FOR)
    clock = ManualClock()
    breaker.failed("down", clock.now())
    index = GuardedIndex(inner, breaker, clock)
    with pytest.raises(IndexUnavailable, match="the search index is unavailable: down"):
        operation(index)
    index.close()
