"""A memory's history from its records (domain/history.py): the supersede chain, the timeline, the confidence curve."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from zengram.memory.domain.history import (
    MAX_CHAIN,
    PROJECTION_DAYS,
    EventKind,
    confidence_curve,
    history_of,
    supersede_chain,
    timeline,
)
from zengram.memory.domain.models import Memory, MemoryType
from zengram.memory.domain.scoring import effective_confidence

from tests.contract.test_record_store import make_memory

T0 = datetime(2026, 3, 1, tzinfo=UTC)
NOW = T0 + timedelta(days=20)


def versions(count: int) -> list[Memory]:
    """A fact superseded `count - 1` times, one day apart; the last is active."""
    ids = [f"v{index}" for index in range(count)]
    return [make_memory(f"version {index}", id=ids[index], type=MemoryType.FACT, key="plan",
                        at=T0 + timedelta(days=index), active=index == count - 1,
                        supersedes=ids[index - 1] if index else None,
                        superseded_by=ids[index + 1] if index < count - 1 else None,
                        superseded_at=T0 + timedelta(days=index + 1) if index < count - 1 else None)
            for index in range(count)]


def fetcher(memories: list[Memory]) -> dict[str, Memory]:
    return {memory.id: memory for memory in memories}


def test_the_chain_runs_oldest_to_newest_from_any_version() -> None:
    chain = versions(4)
    by_id = fetcher(chain)
    for version in chain:
        assert [m.id for m in supersede_chain(version, by_id.get)] == ["v0", "v1", "v2", "v3"]


def test_a_missing_link_ends_that_side_of_the_chain() -> None:
    chain = versions(4)
    by_id = fetcher(chain)
    del by_id["v0"], by_id["v3"]  # gone, or outside the caller's scope
    assert [m.id for m in supersede_chain(chain[1], by_id.get)] == ["v1", "v2"]


def test_a_loop_of_links_cannot_hold_the_walk() -> None:
    one = make_memory("one", id="a", supersedes="b", superseded_by="b")
    other = make_memory("other", id="b", supersedes="a", superseded_by="a")
    assert [m.id for m in supersede_chain(one, fetcher([one, other]).get)] == ["b", "a"]


def test_a_very_long_chain_is_cut_at_the_limit_each_way() -> None:
    chain = versions(2 * MAX_CHAIN + 11)
    middle = chain[MAX_CHAIN + 5]
    walked = supersede_chain(middle, fetcher(chain).get)
    assert len(walked) == 2 * MAX_CHAIN + 1 and walked[MAX_CHAIN] == middle


def test_the_timeline_names_each_version_s_events_in_time_order() -> None:
    old, new = versions(2)
    new = new.model_copy(update={
        "observed_by": ["claude-code", "review-bot"], "observation_count": 2,
        "last_observed_at": T0 + timedelta(days=3), "access_count": 4, "last_accessed_at": T0 + timedelta(days=5),
        "deleted_at": T0 + timedelta(days=6), "deleted_by": "ops", "delete_reason": "wrong client"})

    events = timeline([old, new])

    assert [(event.kind, event.memory_id) for event in events] == [
        (EventKind.CREATED, "v0"), (EventKind.SUPERSEDED, "v0"), (EventKind.CREATED, "v1"),  # a tie: chain order
        (EventKind.CORROBORATED, "v1"), (EventKind.ACCESSED, "v1"), (EventKind.DELETED, "v1")]
    assert [event.at for event in events] == sorted(event.at for event in events)
    details = {event.kind: event.detail for event in events}
    assert details[EventKind.CORROBORATED] == "observed by 2 agents (review-bot besides claude-code)"
    assert details[EventKind.ACCESSED] == "4 accesses in all; this is the last"
    assert details[EventKind.SUPERSEDED] == "superseded by v1"
    assert details[EventKind.DELETED] == "deleted by ops: wrong client"


def test_a_memory_never_observed_twice_nor_read_has_only_its_creation() -> None:
    memory = make_memory(at=T0)
    assert [event.kind for event in timeline([memory])] == [EventKind.CREATED]


def test_an_event_keeps_its_confidence_all_along() -> None:
    event = make_memory(at=T0, confidence=0.8)
    curve = confidence_curve(event, NOW, 0.98)
    assert {point.confidence for point in curve} == {0.8}
    assert curve[0].at == T0 and curve[-1].at == NOW + timedelta(days=PROJECTION_DAYS)


def test_a_fact_decays_resets_at_its_last_access_and_is_projected_after_now() -> None:
    accessed = T0 + timedelta(days=10)
    fact = make_memory(at=T0, type=MemoryType.FACT, key="plan", last_accessed_at=accessed, access_count=1)

    curve = confidence_curve(fact, NOW, 0.98)

    times = [point.at for point in curve]
    assert times == sorted(times) and len(set(times)) == len(times)
    before = [point for point in curve if point.at < accessed]
    after = [point for point in curve if point.at >= accessed]
    assert [p.confidence for p in before] == sorted((p.confidence for p in before), reverse=True)
    assert before[-1].confidence == pytest.approx(0.98**10, abs=1e-4)  # just before the access
    assert after[0].at == accessed and after[0].confidence == 1.0  # the access resets the decay
    assert [p.confidence for p in after] == sorted((p.confidence for p in after), reverse=True)
    assert all(point.projected == (point.at > NOW) for point in curve)
    at_now = next(point for point in curve if point.at == NOW)
    assert at_now.confidence == pytest.approx(effective_confidence(fact, NOW, 0.98), abs=1e-4)


def test_history_of_gathers_chain_events_curve_and_today_s_confidence() -> None:
    chain = versions(3)
    history = history_of(chain[1], fetcher(chain).get, NOW, 0.98)
    assert [m.id for m in history.chain] == ["v0", "v1", "v2"]
    assert len(history.events) == 5  # three creations, two supersessions
    assert history.effective_confidence == pytest.approx(0.98**19, abs=1e-4)  # created on day 1, never read
    assert history.curve[-1].projected
