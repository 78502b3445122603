"""Latency summaries (numpy percentiles) and small formatting helpers."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Latency:
    """Wall-clock latencies of one series of calls, in milliseconds."""

    count: int
    mean_ms: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    min_ms: float
    max_ms: float

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Latency:
        if not seconds:
            raise ValueError("no samples")
        ms = np.asarray(seconds, dtype=np.float64) * 1000.0
        p50, p95, p99 = np.percentile(ms, [50, 95, 99])
        return cls(count=int(ms.size), mean_ms=float(ms.mean()), p50_ms=float(p50), p95_ms=float(p95),
                   p99_ms=float(p99), min_ms=float(ms.min()), max_ms=float(ms.max()))


def load_average() -> tuple[float, float, float]:
    one, five, fifteen = os.getloadavg()
    return round(one, 2), round(five, 2), round(fifteen, 2)


def format_load(load: Sequence[float]) -> str:
    return "/".join(f"{value:.2f}" for value in load)


def format_duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s"
