"""`bench/soak.py` judges a soak by the server's answers and log, and by how far the maintained indexes' answers
stray from the exact scan and FTS5 they are derived from."""

from __future__ import annotations

import httpx
import pytest

from bench.soak import SoakLoad, failure_lines, mean_overlap


def test_overlap_is_the_share_of_each_reference_answer_found_averaged() -> None:
    assert mean_overlap([["a", "b"], ["c"]], [["a", "b"], ["c"]]) == 1.0
    assert mean_overlap([["a", "x"], ["c"]], [["a", "b"], ["c"]]) == pytest.approx(0.75)
    assert mean_overlap([["b", "a"]], [["a", "b"]]) == 1.0  # the order within the top k does not count
    assert mean_overlap([[], ["a"]], [[], []]) == pytest.approx(0.5)  # hits where the reference has none stray


def test_tracebacks_and_error_records_in_the_server_log_are_failures() -> None:
    log = "\n".join([
        "INFO:     Started server process [12]",
        "2026-12-04 04:03:01,132 WARNING zengram.web: slow request",
        "2026-12-04 04:03:02,411 ERROR zengram.adapters.sqlite.keyword_postings: applying written texts failed",
        "Traceback (most recent call last):",
        "KeyError: 'x'",
    ])

    assert failure_lines(log) == [
        "2026-12-04 04:03:02,411 ERROR zengram.adapters.sqlite.keyword_postings: applying written texts failed",
        "Traceback (most recent call last):",
    ]


def test_the_load_counts_acknowledged_writes_server_errors_and_requests_a_killed_server_never_answered() -> None:
    load = SoakLoad()

    def killed() -> httpx.Response:
        raise httpx.RemoteProtocolError("Server disconnected without sending a response.")

    assert load.send("POST", lambda: httpx.Response(201, json={"id": "m1"})) is not None
    assert load.send("POST", lambda: httpx.Response(200, json={"id": "m0"})) is not None  # deduplicated: not new
    assert load.send("SEARCH", lambda: httpx.Response(503, json={"error": "index down"})) is not None
    assert load.send("PATCH", killed) is None

    assert load.acknowledged == ["m1"]
    assert load.unanswered == 1
    assert load.failures == ['SEARCH 503: {"error":"index down"}']
    assert load.answers == {("POST", 201): 1, ("POST", 200): 1, ("SEARCH", 503): 1}
