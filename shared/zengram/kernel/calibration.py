"""Piecewise-linear calibration of an embedder's cosine into a relevance score that means the same whatever the
model: the document base (documents/domain/relevance.py) and chat recall (chat/domain/recall_calibration.py)
each measure their own anchors on a labelled set."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise


@dataclass(frozen=True)
class Calibration:
    """Piecewise-linear (cosine, relevance) anchors, increasing in both; below the first and above the last the
    end values hold."""

    anchors: Sequence[tuple[float, float]]

    def __call__(self, cosine: float) -> float:
        points = self.anchors
        if cosine <= points[0][0]:
            return points[0][1]
        for (x0, y0), (x1, y1) in pairwise(points):
            if cosine <= x1:
                return y0 + (y1 - y0) * (cosine - x0) / (x1 - x0)
        return points[-1][1]


IDENTITY = Calibration(((0.0, 0.0), (1.0, 1.0)))
