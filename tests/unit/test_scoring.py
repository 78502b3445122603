"""Zengram's ranking formula (semantics.md, "Ranking")."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from zengram.kernel.fusion import fuse
from zengram.memory.domain.models import Importance, MemoryType
from zengram.memory.domain.scoring import (
    ScoringConfig,
    access_boost,
    effective_confidence,
    score_candidates,
    similarity,
)

from tests.contract.test_record_store import make_memory

NOW = datetime(2026, 3, 31, tzinfo=UTC)
# semantics.md's formula (the product's defaults: "linear" fusion, reinforcement bounded at ×1.15, ADR 0042)
CONFIG = ScoringConfig(fusion="blend", access_boost_slope=0.3, access_boost_cap=2.0)


def test_similarity_maps_cosine_and_floors_weak_matches() -> None:
    assert similarity(1.0, 0.55) == 1.0
    assert similarity(0.5, 0.55) == 0.75
    assert similarity(0.0, 0.55) == 0.55
    assert similarity(None, 0.55) == 0.55


def test_access_boost_is_logarithmic_and_capped() -> None:
    assert access_boost(0, CONFIG) == 1.0
    assert access_boost(1, CONFIG) == pytest.approx(1.3)
    assert access_boost(3, CONFIG) == pytest.approx(1.6)
    assert access_boost(10_000, CONFIG) == 2.0


def test_reinforcement_is_bounded_so_relevance_dominates() -> None:
    """ADR 0042: by default popularity lifts a hit by ×1.15 at most, so only a hit within 13 % of another's
    relevance can overtake it by being searched often."""
    default = ScoringConfig()
    assert access_boost(1, default) == pytest.approx(1.05)
    assert access_boost(10_000, default) == pytest.approx(1.15)
    relevant = make_memory("relevant", at=NOW, client_id="a")
    popular = make_memory("popular", at=NOW, client_id="b").model_copy(update={"access_count": 10_000})
    candidates = fuse({"vector": [(relevant.id, 0.9), (popular.id, 0.5)]})
    memories = {relevant.id: relevant, popular.id: popular}
    bounded = score_candidates(candidates, memories, now=NOW, multi_path=False, config=default)
    spec = score_candidates(candidates, memories, now=NOW, multi_path=False, config=CONFIG)
    assert [s.memory.id for s in bounded] == [relevant.id, popular.id]  # sim 0.95 vs 0.75 × 1.15
    assert [s.memory.id for s in spec] == [popular.id, relevant.id]  # 0.75 × 2.0: what the issue saw


def test_only_facts_and_statuses_decay_from_last_access() -> None:
    thirty_days_ago = NOW - timedelta(days=30)
    fact = make_memory(type=MemoryType.FACT, key="k", at=thirty_days_ago)
    event = make_memory(type=MemoryType.EVENT, at=thirty_days_ago)
    assert effective_confidence(fact, NOW, 0.98) == pytest.approx(0.98**30)
    assert effective_confidence(event, NOW, 0.98) == 1.0
    touched = fact.model_copy(update={"last_accessed_at": NOW - timedelta(days=2)})
    assert effective_confidence(touched, NOW, 0.98) == pytest.approx(0.98**2)


def test_fusion_ranks_are_one_based_and_keep_the_cosine() -> None:
    candidates = fuse({"vector": [("a", 0.9), ("b", 0.5)], "keyword": [("b", 12.0), ("c", 3.0)]})
    assert candidates["a"].ranks == {"vector": 1} and candidates["a"].cosine == 0.9
    assert candidates["b"].ranks == {"vector": 2, "keyword": 1} and candidates["b"].cosine == 0.5
    assert candidates["c"].cosine is None and candidates["c"].sources == ["keyword"]


def test_effective_score_multiplies_every_factor() -> None:
    memory = make_memory(type=MemoryType.FACT, key="k", importance=Importance.HIGH,
                         at=NOW - timedelta(days=10)).model_copy(update={"access_count": 3})
    candidates = fuse({"vector": [(memory.id, 0.6)], "keyword": [(memory.id, 5.0)]})
    [scored] = score_candidates(candidates, {memory.id: memory}, now=NOW, multi_path=True, config=CONFIG)
    blended = 0.6 * 0.8 + 0.4 * 1.0  # sim = 0.5 + 0.6/2; this hit has the best RRF, so rrf/max = 1
    expected = blended * 0.98**10 * (1 + 0.3 * math.log2(4)) * 0.85
    assert scored.score == round(blended, 4)
    assert scored.effective_score == round(expected, 4)


def test_single_path_mode_uses_similarity_alone() -> None:
    memory = make_memory(importance=Importance.CRITICAL, at=NOW)
    candidates = fuse({"vector": [(memory.id, 0.2)]})
    [scored] = score_candidates(candidates, {memory.id: memory}, now=NOW, multi_path=False, config=CONFIG)
    assert scored.effective_score == 0.6  # sim 0.6 × confidence 1 × boost 1 × critical 1.0


def test_candidates_rank_by_effective_score_and_unknown_ids_are_dropped() -> None:
    low = make_memory("same words", importance=Importance.LOW, at=NOW, client_id="a")
    critical = make_memory("same words", importance=Importance.CRITICAL, at=NOW, client_id="b")
    candidates = fuse({"vector": [(low.id, 0.9), (critical.id, 0.9), ("ghost", 0.99)]})
    scored = score_candidates(candidates, {low.id: low, critical.id: critical}, now=NOW, multi_path=False,
                              config=CONFIG)
    assert [s.memory.id for s in scored] == [critical.id, low.id]


def test_under_linear_fusion_a_near_duplicate_of_the_query_is_not_buried_by_keyword_matches() -> None:
    linear = ScoringConfig(fusion="linear")
    said = make_memory("the freeze on dev deployments starts June 17", at=NOW, client_id="said")
    crowd = [make_memory(f"June 17 freeze dev note {n}", at=NOW, client_id=f"crowd{n}") for n in range(3)]
    memories = {m.id: m for m in [said, *crowd]}

    def ranked(cosine_of_said: float) -> list[str]:
        candidates = fuse({
            "vector": [(said.id, cosine_of_said), *((m.id, 0.6) for m in crowd)],
            "keyword": [(m.id, 12.0 - n) for n, m in enumerate(crowd)],  # the keyword path missed `said`
        })
        return [s.memory.id for s in score_candidates(candidates, memories, now=NOW, multi_path=True, config=linear)]

    assert ranked(0.99)[0] == said.id  # says what the query says: first
    assert ranked(0.90)[-1] == said.id  # merely similar: the keyword matches lead, as linear fusion weighs them
