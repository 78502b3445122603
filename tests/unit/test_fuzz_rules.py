"""The fuzz runs accept only stated failures (tests/fuzz/rules.py): the body-limit rule takes the 413 the body limit
answers, and nothing else."""

from __future__ import annotations

from tests.fuzz.rules import accepted_reason

TOO_LARGE = {"error": "body: larger than 16,777,216 bytes"}


def test_the_body_limits_413_is_accepted_for_an_oversized_body() -> None:
    assert accepted_reason("POST", "/api/v1/messages", "ST201", 413, TOO_LARGE) is not None
    assert accepted_reason("POST", "/memory", "ST103", 413, TOO_LARGE) is not None


def test_another_413_or_another_failure_still_fails() -> None:
    assert accepted_reason("POST", "/memory", "ST201", 413, {"error": "something else"}) is None
    assert accepted_reason("POST", "/memory", "ST101", 413, TOO_LARGE) is None  # a server error stays one
    assert accepted_reason("POST", "/memory", "ST201", 200, TOO_LARGE) is None
