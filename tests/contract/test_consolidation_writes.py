"""The `ConsolidationWrites` contract (see zengram.memory.ports.ConsolidationWrites) on every record backend:
unconsolidated listing, mark consolidated, supersede by a merged memory, expiry of old unaccessed events; with
counters that still agree with a recount."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from zengram.memory.domain.models import Importance, Memory, MemoryType
from zengram.memory.domain.stats import stats_from_counters, tally
from zengram.memory.ports import ConsolidationWrites, RecordStore

from tests.contract.test_record_store import T0, make_memory

LATER = T0 + timedelta(days=40)
EVENT_LEVELS = [Importance.LOW, Importance.MEDIUM]


def stored(store: RecordStore, content: str, **fields: object) -> Memory:
    memory = make_memory(content, **fields)  # type: ignore[arg-type]
    store.create_or_corroborate(memory, max_observers=20)
    return memory


def current(store: RecordStore, memory_id: str) -> Memory:
    found = store.get(memory_id)
    assert found is not None
    return found


def assert_counts_match_a_recount(store: RecordStore) -> None:
    counters: Counter[str] = Counter()
    for memory in store.iter_all(include_deleted=True):
        counters.update(tally(memory))
    expected = stats_from_counters(counters, decayed=0, pending_index=0)
    actual = store.stats(LATER, 0.98)
    assert (actual.total, actual.active, actual.superseded, actual.deleted, actual.consolidated, actual.by_type) == (
        expected.total, expected.active, expected.superseded, expected.deleted, expected.consolidated,
        expected.by_type)


def test_unconsolidated_lists_active_unconsolidated_memories_oldest_first(record_store: RecordStore) -> None:
    first = stored(record_store, "Acme moved the launch to May", at=T0)
    second = stored(record_store, "Globex renewed for a year", at=T0 + timedelta(minutes=1), client_id="globex")
    done = stored(record_store, "Acme hired a designer", at=T0 + timedelta(minutes=2))
    gone = stored(record_store, "Acme's office moved", at=T0 + timedelta(minutes=3))
    record_store.mark_consolidated([done.id], LATER)
    record_store.soft_delete(gone.id, "claude-code", None, LATER)
    assert [m.id for m in record_store.unconsolidated(10)] == [first.id, second.id]
    assert [m.id for m in record_store.unconsolidated(1)] == [first.id]


def test_mark_consolidated_bumps_revision_and_marks_pending(record_store: RecordStore) -> None:
    memory = stored(record_store, "Acme moved the launch to May")
    record_store.mark_indexed({memory.id: memory.revision})
    deleted = stored(record_store, "Acme's office moved")
    record_store.soft_delete(deleted.id, "claude-code", None, T0)

    changed = record_store.mark_consolidated([memory.id, memory.id, deleted.id, "missing"], LATER)

    assert [m.id for m in changed] == [memory.id]
    after = current(record_store, memory.id)
    assert after.consolidated and after.revision == memory.revision + 1 and after.updated_at == LATER
    assert memory.id in {m.id for m in record_store.pending_index(10)}
    assert record_store.mark_consolidated([memory.id], LATER) == []  # already consolidated: no change
    assert_counts_match_a_recount(record_store)


def test_supersede_by_retires_sources_and_frees_their_slots(record_store: RecordStore) -> None:
    # Given two facts, one with a key, and a merged fact stored in their place
    keyed = stored(record_store, "Acme uses Next.js 14", type=MemoryType.FACT, key="acme-frontend")
    plain = stored(record_store, "Acme's frontend uses the App Router", type=MemoryType.FACT)
    other_client = stored(record_store, "Globex uses Vue", type=MemoryType.FACT, client_id="globex")
    merged = stored(record_store, "Acme uses Next.js 14 with the App Router", type=MemoryType.FACT,
                    at=LATER, source_agent="consolidation")

    # When the sources are superseded by it
    changed = record_store.supersede_by([keyed.id, plain.id, merged.id, "missing"], merged.id, LATER)

    # Then each source is inactive, points at the merged one and is consolidated; the merged one is untouched
    assert {m.id for m in changed} == {keyed.id, plain.id}
    for source in (keyed, plain):
        after = current(record_store, source.id)
        assert (after.active, after.superseded_by, after.superseded_at, after.valid_to, after.consolidated) == (
            False, merged.id, LATER, LATER, True)
        assert after.revision == source.revision + 1
    assert current(record_store, merged.id) == merged
    assert current(record_store, other_client.id).active
    # ...and their content and key no longer block new memories
    again = make_memory("Acme uses Next.js 14", type=MemoryType.FACT, key="acme-frontend", at=LATER)
    outcome = record_store.create_or_corroborate(again, max_observers=20)
    assert outcome.kind.value == "created" and outcome.superseded is None
    assert_counts_match_a_recount(record_store)


def test_supersede_by_only_marks_inactive_sources_consolidated(record_store: RecordStore) -> None:
    old = stored(record_store, "Acme uses Next.js 13", type=MemoryType.FACT, key="acme-frontend")
    new = stored(record_store, "Acme uses Next.js 14", type=MemoryType.FACT, key="acme-frontend",
                 at=T0 + timedelta(minutes=1))
    deleted = stored(record_store, "Acme's office moved")
    record_store.soft_delete(deleted.id, "claude-code", None, T0)
    merged = stored(record_store, "Acme runs Next.js 14", type=MemoryType.FACT, at=LATER)

    changed = record_store.supersede_by([old.id, deleted.id], merged.id, LATER)

    assert [m.id for m in changed] == [old.id]
    after = current(record_store, old.id)
    assert after.superseded_by == new.id and after.consolidated  # its real successor is kept
    deleted_now = current(record_store, deleted.id)
    assert not deleted_now.consolidated and deleted_now.superseded_by is None  # deleted: left alone
    assert_counts_match_a_recount(record_store)


def test_expire_events_soft_deletes_old_unaccessed_low_and_medium_events(record_store: RecordStore) -> None:
    cutoff = T0 + timedelta(days=1)
    expired = [stored(record_store, "Standup happened", importance=Importance.LOW),
               stored(record_store, "Build 812 passed", importance=Importance.MEDIUM)]
    kept = [
        stored(record_store, "Acme signed the renewal", importance=Importance.HIGH),
        stored(record_store, "Outage postmortem written", importance=Importance.CRITICAL),
        stored(record_store, "Acme uses Next.js", type=MemoryType.FACT, importance=Importance.LOW),
        stored(record_store, "Build 813 passed", importance=Importance.LOW, at=cutoff),  # not older than cutoff
        stored(record_store, "Demo recorded", importance=Importance.LOW),
    ]
    record_store.record_access([kept[-1].id], T0)

    changed = record_store.expire_events(cutoff, EVENT_LEVELS, "consolidation", "expired: unaccessed", LATER, 100)

    assert sorted(m.id for m in changed) == sorted(m.id for m in expired)
    for memory in expired:
        after = current(record_store, memory.id)
        assert (after.active, after.deleted_at, after.deleted_by, after.delete_reason) == (
            False, LATER, "consolidation", "expired: unaccessed")
        assert after.revision == memory.revision + 1
    assert all(current(record_store, memory.id).active for memory in kept)
    assert record_store.expire_events(cutoff, EVENT_LEVELS, "consolidation", "again", LATER, 100) == []
    # the content slot is free again
    assert record_store.find_active_duplicate("acme", "event", expired[0].content_hash) is None
    assert_counts_match_a_recount(record_store)


def test_expire_events_respects_the_limit_oldest_first(record_store: RecordStore) -> None:
    events = [stored(record_store, f"Standup {n} happened", importance=Importance.LOW, at=T0 + timedelta(minutes=n))
              for n in range(3)]
    changed = record_store.expire_events(LATER, EVENT_LEVELS, "consolidation", "expired", LATER, 2)
    assert [m.id for m in changed] == [events[0].id, events[1].id]


def test_the_record_backend_takes_consolidation_writes(record_store: RecordStore) -> None:
    assert isinstance(record_store, ConsolidationWrites)
