"""Semantic versioning (semantics.md), decay and recall ranking of subject memories, and their state changes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from zengram.chat.domain.memories import (
    MemoryKind,
    MemoryStatus,
    Neighbour,
    RecallPolicy,
    VersioningPolicy,
    decay,
    decide_version,
    importance_weight,
    recall_score,
    similarity_of,
)
from zengram.kernel.errors import Conflict

from tests.contract.chat.helpers import T0, memory

POLICY = VersioningPolicy()


def near(similarity: float, kind: MemoryKind = MemoryKind.FACT, **fields: object) -> Neighbour:
    return Neighbour(memory(f"memory at {similarity}", kind=kind, **fields), similarity)


def test_at_or_above_85_a_new_memory_is_skipped_as_a_duplicate() -> None:
    decision = decide_version(MemoryKind.FACT, [near(85.0), near(92.0), near(70.0)], POLICY)
    assert decision.skipped and decision.duplicate_of is not None and decision.duplicate_of.similarity == 92.0
    assert decision.supersede == []


def test_same_kind_memories_from_60_up_to_85_are_superseded() -> None:
    neighbours = [near(84.99), near(60.0), near(59.99), near(75.0, MemoryKind.PREFERENCE)]
    decision = decide_version(MemoryKind.FACT, neighbours, POLICY)
    assert not decision.skipped
    assert [n.similarity for n in decision.supersede] == [84.99, 60.0]


def test_only_active_memories_take_part() -> None:
    superseded = near(99.0, status=MemoryStatus.SUPERSEDED)
    deleted = near(70.0, deleted_at=T0)
    assert decide_version(MemoryKind.FACT, [superseded, deleted], POLICY) == decide_version(MemoryKind.FACT, [],
                                                                                            POLICY)


def test_similarity_is_the_cosine_in_percent() -> None:
    assert similarity_of(0.8512) == 85.12 and similarity_of(-0.3) == 0.0 and similarity_of(1.2) == 100.0


def test_decay_resets_on_recall_and_runs_faster_for_temporal_memories() -> None:
    policy = RecallPolicy(decay_per_day=0.98, temporal_decay_per_day=0.9)
    old = memory("User is in Berlin", created_at=T0, updated_at=T0)
    ten_days = T0 + timedelta(days=10)
    assert decay(old, ten_days, policy) == pytest.approx(0.98**10)
    assert decay(old.model_copy(update={"is_temporal": True}), ten_days, policy) == pytest.approx(0.9**10)
    recalled = old.model_copy(update={"last_seen_at": T0 + timedelta(days=9)})
    assert decay(recalled, ten_days, policy) == pytest.approx(0.98)


def test_recall_ranks_by_relevance_confidence_decay_and_importance() -> None:
    policy = RecallPolicy()
    fresh = memory("x", importance=100, confidence=0.5)
    assert recall_score(fresh, 0.8, T0, policy) == pytest.approx(0.8 * 0.5 * 1.0 * 1.0)
    assert importance_weight(0) == 0.5 and importance_weight(50) == 0.75
    unimportant = memory("y", importance=0, confidence=1.0)
    assert recall_score(unimportant, 0.8, T0 + timedelta(days=1), policy) == pytest.approx(0.8 * 0.98 * 0.5, abs=1e-4)


def test_state_changes_follow_the_rules() -> None:
    active = memory("User likes jazz")
    superseded = active.superseded("mem_new", T0)
    assert superseded.status is MemoryStatus.SUPERSEDED and superseded.superseded_by == "mem_new"
    assert superseded.revision == active.revision + 1
    with pytest.raises(Conflict):
        superseded.superseded("mem_newer", T0)
    restored = superseded.restored(T0)
    assert restored.is_active and restored.superseded_by is None
    assert restored.restored(T0) is restored  # already active: nothing changes
    deleted = restored.deleted(T0)
    assert deleted.deleted(T0) is deleted
    with pytest.raises(Conflict, match="deleted"):
        deleted.restored(T0)
    with pytest.raises(Conflict, match="deleted"):
        deleted.patched({"importance": 3}, T0)
