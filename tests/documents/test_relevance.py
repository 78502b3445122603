"""The relevance calibration (documents.domain.relevance): with the API's default threshold 0.7, a chunk that answers
the question passes and one of an unrelated text does not, in every mode.

On cosines fed directly (loading the real model takes ~20 s here): the MiniLM cosines below were measured over
bench/documents_queries.json with `make bench-documents-quality` (docs/documents.md, "Scores")."""

from __future__ import annotations

import pytest
from zengram.documents.domain.relevance import IDENTITY, MINILM, calibration_for, relevance

DEFAULT_THRESHOLD = 0.7


@pytest.mark.parametrize(("cosine", "passes"), [(0.83, True), (0.55, True), (0.46, True), (0.36, True),
                                                (0.30, False), (0.22, False), (0.16, False), (-0.1, False)])
def test_minilm_cosines_of_relevant_chunks_pass_the_default_threshold(cosine: float, passes: bool) -> None:
    """Measured: answering chunks scored 0.37–0.83 cosine (most 0.45–0.65); unrelated questions' best 0.16–0.22."""
    assert (MINILM(cosine) >= DEFAULT_THRESHOLD) is passes


def test_calibration_is_monotonic_within_unit_range() -> None:
    cosines = [step / 100 for step in range(-100, 101)]
    scores = [MINILM(cosine) for cosine in cosines]
    assert scores == sorted(scores) and scores[0] == 0.0 and scores[-1] == 1.0
    assert MINILM(0.35) == pytest.approx(0.7) and MINILM(0.2) == pytest.approx(0.15)
    assert calibration_for("minilm:all-MiniLM-L6-v2") is MINILM and calibration_for("test:hashing") is IDENTITY
    assert IDENTITY(0.42) == pytest.approx(0.42) and IDENTITY(1.5) == 1.0


def test_keyword_and_graph_evidence_keep_the_scale() -> None:
    unrelated, relevant = MINILM(0.2), MINILM(0.5)
    assert relevance(unrelated, bm25=1.0, lexical_weight=1.0) < DEFAULT_THRESHOLD  # BM25's top alone: not enough
    assert relevance(relevant, bm25=1.0, lexical_weight=1.0) > relevance(relevant) >= DEFAULT_THRESHOLD
    assert relevance(unrelated, graph=0.9) == pytest.approx(0.9)  # an entity the question names
    assert relevance(0.99, bm25=1.0, graph=1.0, lexical_weight=1.0) <= 1.0
