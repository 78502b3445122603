"""Relevance scores in [0, 1] that mean the same in every query mode (docs/documents.md, "Scores").

A raw cosine says little on its own: all-MiniLM-L6-v2 gives the chunk that answers a question 0.45–0.85 and a
chunk of an unrelated text 0.1–0.25, so the API's default `similarity_threshold` 0.7 would drop nearly every right
answer. `Calibration` maps an embedder's cosine to a relevance score by piecewise-linear anchors measured for it
(bench/documents_quality.py over bench/documents_queries.json): for MiniLM, cosine 0.35 (the least a relevant chunk
scored there, bar two) maps to 0.7, and 0.22 (the most an unrelated question's best chunk scored) to about 0.2.
An embedder without measured anchors keeps its cosine (clipped to [0, 1]).

Keyword and graph evidence then adjust that semantic score the same way in every mode (`relevance`): BM25
agreement lifts it by at most `LEXICAL_LIFT` of the way to 1 (BM25 is relative to this query's best, so it can
confirm a semantic match but never certify one alone), and a code-graph hit — an entity the question names, or one
related to it — scores at least its graph score.
"""

from __future__ import annotations

from zengram.kernel.calibration import IDENTITY as IDENTITY
from zengram.kernel.calibration import Calibration as Calibration

LEXICAL_LIFT = 0.5
MINILM = Calibration(((0.0, 0.0), (0.20, 0.15), (0.35, 0.70), (0.60, 0.95), (1.0, 1.0)))
CALIBRATIONS = {"minilm:all-MiniLM-L6-v2": MINILM}


def calibration_for(model_id: str) -> Calibration:
    return CALIBRATIONS.get(model_id, IDENTITY)


def relevance(semantic: float, *, bm25: float | None = None, graph: float | None = None,
              lexical_weight: float = 0.0) -> float:
    """`semantic` (calibrated, in [0, 1]) lifted by BM25 agreement (`bm25` relative to the query's best, weighted
    by `lexical_weight` in [0, 1]), and at least the `graph` score."""
    lifted = semantic + (1.0 - semantic) * LEXICAL_LIFT * lexical_weight * (bm25 or 0.0)
    return round(min(1.0, max(lifted, graph or 0.0)), 6)
