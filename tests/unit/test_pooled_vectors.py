"""bench/pooled.py: the seeding mode for 100k-1M stores that derives vectors past a pool of real ones (#38)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.pooled import PooledEmbedder, pool_size_from_env
from tests.support import HashingEmbedder

POOL = [f"pool text number {i} about topic {i % 3}" for i in range(8)]


def test_pool_texts_keep_their_real_vectors_and_others_are_derived_the_same_every_time() -> None:
    real = HashingEmbedder(32)
    pooled = PooledEmbedder(real, POOL, batch=3)
    vectors = pooled.embed([POOL[5], "a text past the pool", "another one"])
    np.testing.assert_allclose(vectors[0], real.embed([POOL[5]])[0], atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(vectors[1], vectors[2])
    again = PooledEmbedder(HashingEmbedder(32), POOL).embed(["another one", "a text past the pool"])
    np.testing.assert_allclose(again, vectors[[2, 1]], atol=1e-6)  # a resumed seeding derives the same vectors
    assert pooled.derived == 2
    nearest_pool = max(float(vectors[1] @ row) for row in real.embed(POOL))
    assert nearest_pool > 0.5  # derived from pool vectors: close to one of them


def test_the_pool_size_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ZENGRAM_BENCH_POOLED_VECTORS", raising=False)
    assert pool_size_from_env() == 0
    monkeypatch.setenv("ZENGRAM_BENCH_POOLED_VECTORS", "2000")
    assert pool_size_from_env() == 2000
    monkeypatch.setenv("ZENGRAM_BENCH_POOLED_VECTORS", "1")
    with pytest.raises(SystemExit):
        pool_size_from_env()
