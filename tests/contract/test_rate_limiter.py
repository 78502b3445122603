"""The `RateLimiter` contract (see zengram.memory.ports.RateLimiter), on SQLite and DynamoDB."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from zengram.kernel.ports import RateLimiter

from tests.support import ManualClock

MINUTE = 60


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()  # 2026-03-01 12:00:00 UTC: the start of a minute and of an hour


@pytest.fixture
def limiter(rate_limiter: RateLimiter) -> RateLimiter:
    assert isinstance(rate_limiter, RateLimiter)  # built with this module's ManualClock (`clock`)
    return rate_limiter


def test_the_first_limit_hits_pass_then_retry_after_is_the_rest_of_the_window(
    limiter: RateLimiter, clock: ManualClock
) -> None:
    assert [limiter.hit("k", "writes", 3, MINUTE) for _ in range(3)] == [None, None, None]
    clock.advance(seconds=20)
    assert limiter.hit("k", "writes", 3, MINUTE) == 40
    clock.advance(seconds=39.5)
    assert limiter.hit("k", "writes", 3, MINUTE) == 1  # half a second left rounds up, never 0


def test_a_new_window_starts_a_new_count(limiter: RateLimiter, clock: ManualClock) -> None:
    assert limiter.hit("k", "writes", 1, MINUTE) is None
    assert limiter.hit("k", "writes", 1, MINUTE) is not None
    clock.advance(seconds=60)
    assert limiter.hit("k", "writes", 1, MINUTE) is None
    assert limiter.hit("k", "writes", 1, MINUTE) == 60


def test_windows_are_aligned_not_sliding(limiter: RateLimiter, clock: ManualClock) -> None:
    clock.advance(seconds=59)
    assert limiter.hit("k", "heavy", 1, 3600) is None
    assert limiter.hit("k", "heavy", 1, 3600) == 3600 - 59
    clock.advance(seconds=3600 - 59)  # the next hour begins: allowed again at once
    assert limiter.hit("k", "heavy", 1, 3600) is None


def test_keys_and_buckets_count_apart(limiter: RateLimiter) -> None:
    assert limiter.hit("key-a", "writes", 1, MINUTE) is None
    assert limiter.hit("key-a", "reads", 1, MINUTE) is None
    assert limiter.hit("key-b", "writes", 1, MINUTE) is None
    assert limiter.hit("key-a#reads", "", 1, MINUTE) is None  # no collision through the separator
    assert limiter.hit("key-a", "writes", 1, MINUTE) is not None


def test_concurrent_hits_allow_exactly_the_limit(limiter: RateLimiter) -> None:
    limit, callers = 10, 40
    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(lambda _: limiter.hit("k", "writes", limit, MINUTE), range(callers)))
    assert results.count(None) == limit
    assert all(result == MINUTE for result in results if result is not None)


def test_a_refund_gives_one_hit_back_in_the_current_window(limiter: RateLimiter) -> None:
    assert limiter.hit("k", "heavy", 1, MINUTE) is None
    assert limiter.hit("k", "heavy", 1, MINUTE) is not None  # spent (this refused hit counts too)

    limiter.refund("k", "heavy", MINUTE)
    limiter.refund("k", "heavy", MINUTE)

    assert limiter.hit("k", "heavy", 1, MINUTE) is None
    assert limiter.hit("k", "heavy", 1, MINUTE) is not None


def test_a_refund_never_goes_below_zero_nor_touches_another_window(limiter: RateLimiter, clock: ManualClock) -> None:
    limiter.refund("k", "heavy", MINUTE)  # nothing counted yet: no credit is banked
    assert limiter.hit("k", "heavy", 1, MINUTE) is None
    assert limiter.hit("k", "heavy", 1, MINUTE) is not None

    assert limiter.hit("k", "other", 1, MINUTE) is None
    clock.advance(seconds=60)
    limiter.refund("k", "other", MINUTE)  # the window it was counted in is over
    assert limiter.hit("k", "other", 1, MINUTE) is None
    assert limiter.hit("k", "other", 1, MINUTE) is not None
