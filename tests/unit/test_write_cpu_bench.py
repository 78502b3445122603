"""`bench/write_cpu.py` separates a write's embedding from the rest by replaying cached vectors: a text embedded
once is answered from the cache in every later run, the same vector, and only new texts reach the real embedder."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench.write_cpu import ReplayEmbedder, Round, render, thread_kind
from tests.support import HashingEmbedder


def test_replayed_vectors_are_the_embedders_and_survive_a_restart(tmp_path: Path) -> None:
    cache = tmp_path / "vectors.npz"
    inner = HashingEmbedder(dimension=16)
    first = ReplayEmbedder(inner, cache)
    vectors = first.embed(["the invoices moved", "payroll is green", "the invoices moved"])
    assert first.misses == 2 and inner.calls == 1
    np.testing.assert_array_equal(vectors, inner.embed(["the invoices moved", "payroll is green",
                                                        "the invoices moved"]))
    first.save()

    calls = inner.calls
    again = ReplayEmbedder(inner, cache)
    np.testing.assert_array_equal(again.embed(["payroll is green"]), vectors[1:2])
    assert again.misses == 0 and inner.calls == calls  # answered from the file, not the embedder
    assert again.model_id == inner.model_id and again.dimension == 16


def test_threads_are_grouped_by_kind_and_idle_ones_left_out() -> None:
    assert thread_kind("zengram-embed_3") == "zengram-embed"
    assert thread_kind("AnyIO worker thread") == "AnyIO worker thread"
    rounds = [Round(writes=10, server_cpu_ms=2.0 + i, client_cpu_ms=0.5, wall_ms=3.0, embedded_for_real=0,
                    by_thread_ms={"MainThread": 1.0 + i, "zengram-repair": 0.0}) for i in range(3)]
    report = render(rounds)
    assert "server 3.00" in report and "MainThread: 2.00" in report
    assert "zengram-repair" not in report
