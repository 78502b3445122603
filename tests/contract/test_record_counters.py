"""The `RecordCounters` contract (see zengram.memory.ports.RecordCounters): `stats` (GET /stats) on every record
backend,
equal to a recount of the records, whatever the workload (written through the backend's `RecordStore`)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

from zengram.kernel.content import content_hash
from zengram.memory.domain.models import Importance, Memory, MemoryChanges, MemoryType
from zengram.memory.domain.scoring import effective_confidence
from zengram.memory.domain.stats import RecordStats, stats_of
from zengram.memory.ports import RecordCounters, RecordStore

from tests.contract.test_record_store import T0, make_memory

FACTOR = 0.98  # 0.98^34.3 days = 0.5: a fact untouched for 35 days has decayed, one untouched for 34 has not


def recount(store: RecordStore, now: datetime, decay_factor: float = FACTOR) -> RecordStats:
    """The numbers `stats` must give, counted the slow way from every record."""
    memories = list(store.iter_all(include_deleted=True))
    kept = [memory for memory in memories if memory.deleted_at is None]
    return RecordStats(
        total=len(kept),
        active=sum(memory.active for memory in kept),
        superseded=sum(not memory.active for memory in kept),
        deleted=len(memories) - len(kept),
        consolidated=sum(memory.consolidated for memory in kept),
        by_type={type_: sum(memory.type is type_ for memory in kept) for type_ in MemoryType},
        decayed_below_50pct=sum(
            memory.active and memory.type in (MemoryType.FACT, MemoryType.STATUS)
            and effective_confidence(memory, now, decay_factor) < 0.5
            for memory in kept),
        pending_index=len(store.pending_index(10_000)),
    )


def store(record_store: RecordStore, memory: Memory) -> Memory:
    return record_store.create_or_corroborate(memory, max_observers=20).memory


def test_an_empty_store_counts_nothing(record_store: RecordStore) -> None:
    assert record_store.stats(T0, FACTOR) == RecordStats()


def test_stats_equal_a_recount_after_a_mixed_workload(record_store: RecordStore) -> None:
    # Given every kind of write: create, dedup, corroborate, supersede, update, delete, restore, import, access
    event = store(record_store, make_memory("Acme deploys on Fridays"))
    store(record_store, make_memory("Acme deploys on Fridays"))  # deduplicated
    store(record_store, make_memory("Acme deploys on Fridays", source_agent="n8n"))  # corroborated
    old_stack = store(record_store, make_memory("Stack is Next.js 14", type=MemoryType.FACT, key="stack"))
    store(record_store, make_memory("Stack is Next.js 15", type=MemoryType.FACT, key="stack", at=T0 + timedelta(1)))
    status = store(record_store, make_memory("pipeline green", type=MemoryType.STATUS, subject="pipeline"))
    decision = store(record_store, make_memory("We pick Postgres", type=MemoryType.DECISION))
    record_store.update(decision.id, MemoryChanges(content="We pick MySQL", content_hash=content_hash("We pick MySQL"),
                                                   importance=Importance.HIGH), T0 + timedelta(hours=1))
    record_store.soft_delete(event.id, "claude-code", "wrong", T0 + timedelta(hours=2))
    record_store.restore(old_stack.id, T0 + timedelta(days=2))  # the 15 fact is superseded in turn
    record_store.import_memory(make_memory("Imported insight", type=MemoryType.FACT, key="insight",
                                           consolidated=True, confidence=0.7))
    record_store.import_memory(make_memory("Imported and gone", deleted_at=T0, deleted_by="x", active=False))
    record_store.import_memory(make_memory("Imported old news", type=MemoryType.STATUS, subject="news",
                                           active=False, superseded_by="somebody", consolidated=True))
    record_store.record_access([status.id, status.id], T0 + timedelta(days=30))
    record_store.mark_indexed({decision.id: decision.revision + 1})
    now = T0 + timedelta(days=40)

    # When the stats are read
    stats = record_store.stats(now, FACTOR)

    # Then they equal the recount, which itself has the numbers this workload must give
    assert stats == recount(record_store, now)
    assert (stats.total, stats.active, stats.superseded, stats.deleted, stats.consolidated) == (6, 4, 2, 2, 2)
    assert stats.by_type == {MemoryType.EVENT: 0, MemoryType.FACT: 3, MemoryType.DECISION: 1, MemoryType.STATUS: 2}
    # the restored 14 fact (touched at creation, 40 days ago) and the 0.7 import have decayed; the status
    # accessed 10 days ago has not
    assert stats.decayed_below_50pct == 2
    assert stats.pending_index == 7  # every memory but the decision the indexer confirmed
    # and a tenant scope's stats, counted memory by memory (domain.stats.stats_of), agree with the store's own
    counted = stats_of(record_store.iter_all(include_deleted=True, client_ids=["acme"]), now, FACTOR,
                       pending_index=stats.pending_index)
    assert counted == stats


def test_decayed_counts_move_with_the_clock_and_with_access(record_store: RecordStore) -> None:
    fact = store(record_store, make_memory("Acme uses Next.js", type=MemoryType.FACT, key="stack"))
    store(record_store, make_memory("pipeline green", type=MemoryType.STATUS, subject="pipeline"))
    store(record_store, make_memory("An event never decays"))
    record_store.import_memory(make_memory("Half sure", type=MemoryType.FACT, key="doubt", confidence=0.6))

    def decayed(days: float, factor: float = FACTOR) -> int:
        now = T0 + timedelta(days=days)
        stats = record_store.stats(now, factor)
        assert stats == recount(record_store, now, factor)
        return stats.decayed_below_50pct

    # 0.6 × 0.98^9.02 = 0.5: the doubtful fact goes first, the other two after 34.3 days
    assert [decayed(0), decayed(8), decayed(10), decayed(34), decayed(35)] == [0, 0, 1, 1, 3]
    assert decayed(1.5, factor=0.5) == 3  # the factor is the caller's: 0.5^1.5 = 0.35
    # An access restarts the clock of that memory only
    record_store.record_access([fact.id], T0 + timedelta(days=30))
    assert [decayed(35), decayed(64), decayed(65)] == [2, 2, 3]
    # A superseded fact no longer counts, decayed or not
    store(record_store, make_memory("Acme uses Remix", type=MemoryType.FACT, key="stack", at=T0 + timedelta(65)))
    assert decayed(65) == 2


def test_concurrent_writers_keep_the_counters_exact(record_store: RecordStore) -> None:
    # Given writers racing on one fact key, on identical content, and on deleting what the others wrote
    def write(i: int) -> None:
        at = T0 + timedelta(milliseconds=i)
        store(record_store, make_memory(f"price is {i % 10}", type=MemoryType.FACT, key="price", at=at))
        store(record_store, make_memory("shared note", source_agent=f"agent-{i % 3}", at=at))
        mine = store(record_store, make_memory(f"scratch {i}", at=at))
        if i % 2:
            record_store.soft_delete(mine.id, "claude-code", None, at)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(write, range(24)))

    # Then the counters equal a recount
    now = T0 + timedelta(days=50)
    stats = record_store.stats(now, FACTOR)
    assert stats == recount(record_store, now)
    assert (stats.active, stats.deleted, stats.decayed_below_50pct) == (1 + 1 + 12, 12, 1)


def test_stats_equal_a_recount_after_consolidation_writes(record_store: RecordStore) -> None:
    # Given facts and statuses old enough to have decayed, and old unaccessed events
    facts = [store(record_store, make_memory(f"Acme fact {n}", type=MemoryType.FACT, key=f"fact-{n}"))
             for n in range(3)]
    status = store(record_store, make_memory("pipeline green", type=MemoryType.STATUS, subject="pipeline"))
    old_events = [store(record_store, make_memory(f"Acme call {n}", importance=Importance.LOW)) for n in range(2)]
    kept_event = store(record_store, make_memory("Acme board meeting", importance=Importance.HIGH))
    now = T0 + timedelta(days=40)
    before = record_store.stats(now, FACTOR)
    assert before.decayed_below_50pct == 4  # three facts and the status, none accessed for 40 days

    # When consolidation merges two facts into a fresh one, marks the rest consolidated and expires old events
    merged = store(record_store, make_memory("Acme facts 0 and 1", type=MemoryType.FACT, key="merged", at=now))
    assert len(record_store.supersede_by([facts[0].id, facts[1].id], merged.id, now)) == 2
    record_store.mark_consolidated([facts[2].id, status.id, kept_event.id, merged.id], now)
    expired = record_store.expire_events(T0 + timedelta(days=10), [Importance.LOW, Importance.MEDIUM],
                                         "consolidation", "expired", now, limit=10)
    assert {memory.id for memory in expired} == {memory.id for memory in old_events}

    # Then every number, decay and index backlog included, equals a recount
    stats = record_store.stats(now, FACTOR)
    assert stats == recount(record_store, now)
    assert (stats.total, stats.active, stats.superseded, stats.deleted, stats.consolidated) == (6, 4, 2, 2, 6)
    assert stats.decayed_below_50pct == 2  # the superseded facts left the count; the merged one is fresh
    assert stats.pending_index == 8


def test_concurrent_lifecycle_writes_keep_the_counters_exact(record_store: RecordStore) -> None:
    # Given memories that racing threads update, delete, restore, access and consolidate at the same time
    facts = [store(record_store, make_memory(f"v{n} of the plan", type=MemoryType.FACT, key="plan",
                                             at=T0 + timedelta(minutes=n))) for n in range(6)]
    events = [store(record_store, make_memory(f"note {n}")) for n in range(12)]
    later = T0 + timedelta(hours=1)

    def work(i: int) -> None:
        event = events[i]
        if i % 3 == 0:
            record_store.soft_delete(event.id, "claude-code", None, later)
        elif i % 3 == 1:
            record_store.update(event.id, MemoryChanges(importance=Importance.HIGH), later)
        else:
            record_store.record_access([event.id, facts[i % 6].id], later)
        if i < 5:
            record_store.restore(facts[i].id, later + timedelta(milliseconds=i))  # each takes the key in turn
        record_store.mark_consolidated([event.id, facts[i % 6].id], later)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(work, range(12)))

    # Then the counters equal a recount, and exactly one version of the plan is active
    now = T0 + timedelta(days=50)
    stats = record_store.stats(now, FACTOR)
    assert stats == recount(record_store, now)
    assert sum(memory.active for memory in record_store.iter_all() if memory.type is MemoryType.FACT) == 1
    assert (stats.total, stats.deleted, stats.active) == (14, 4, 9)


def test_the_record_backend_keeps_the_counters(record_store: RecordStore) -> None:
    assert isinstance(record_store, RecordCounters)
