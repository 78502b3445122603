"""The `IndexOutbox` contract (see zengram.memory.ports.IndexOutbox) for every record store: the queue of changes
still to
reach the search index, failed attempts counted per record, and records parked after too many."""

from __future__ import annotations

from datetime import timedelta

from zengram.kernel.outbox import IndexAttempts
from zengram.memory.domain.models import MemoryChanges
from zengram.memory.ports import IndexOutbox, RecordStore

from tests.contract.test_record_store import T0, make_memory


def stored(record_store: RecordStore, content: str, minutes: int = 0) -> tuple[str, int]:
    memory = make_memory(content, at=T0 + timedelta(minutes=minutes))
    record_store.create_or_corroborate(memory, max_observers=20)
    return memory.id, memory.revision


def queue(record_store: RecordStore) -> list[str]:
    return [memory.content for memory in record_store.pending_index(100)]


def test_a_failed_attempt_is_counted_and_queued_behind_the_rest(record_store: RecordStore) -> None:
    poison, revision = stored(record_store, "poison", 0)
    stored(record_store, "second", 1)
    stored(record_store, "third", 2)
    assert queue(record_store) == ["poison", "second", "third"]

    first = record_store.record_index_failure(poison, revision, "mapper_parsing_exception", T0 + timedelta(hours=1),
                                              park_after=3)
    second = record_store.record_index_failure(poison, revision, "still bad", T0 + timedelta(hours=2), park_after=3)

    assert (first, second) == (IndexAttempts(attempts=1, parked=False), IndexAttempts(attempts=2, parked=False))
    assert queue(record_store) == ["second", "third", "poison"]  # the rest go first
    assert record_store.parked_index(10) == []


def test_a_record_is_parked_after_park_after_attempts_with_its_last_error(record_store: RecordStore) -> None:
    poison, revision = stored(record_store, "poison", 0)
    stored(record_store, "healthy", 1)
    for hour in (1, 2):
        record_store.record_index_failure(poison, revision, f"error {hour}", T0 + timedelta(hours=hour), park_after=2)

    assert queue(record_store) == ["healthy"]
    [parked] = record_store.parked_index(10)
    assert (parked.memory_id, parked.revision, parked.attempts) == (poison, revision, 2)
    assert parked.last_error == "error 2"
    assert parked.parked_at == T0 + timedelta(hours=2)
    stats = record_store.stats(T0, 0.98)
    assert (stats.pending_index, stats.parked_index) == (1, 1)


def test_without_park_after_a_record_is_never_parked(record_store: RecordStore) -> None:
    memory_id, revision = stored(record_store, "stubborn")
    for hour in range(1, 6):
        outcome = record_store.record_index_failure(memory_id, revision, "boom", T0 + timedelta(hours=hour),
                                                    park_after=None)
    assert outcome == IndexAttempts(attempts=5, parked=False)
    assert queue(record_store) == ["stubborn"]


def test_a_failure_of_an_old_revision_changes_nothing(record_store: RecordStore) -> None:
    memory_id, revision = stored(record_store, "changing")
    record_store.update(memory_id, MemoryChanges(metadata={"v": 2}), T0 + timedelta(minutes=5))
    assert record_store.record_index_failure(memory_id, revision, "old", T0 + timedelta(hours=1), park_after=1) is None
    assert queue(record_store) == ["changing"]
    assert record_store.parked_index(10) == []


def test_a_failure_of_an_indexed_record_puts_it_back_in_the_queue(record_store: RecordStore) -> None:
    # A rebuild (reindex) that the index refused this record: it must not stay marked indexed
    memory_id, revision = stored(record_store, "refused by a rebuild")
    record_store.mark_indexed({memory_id: revision})
    assert queue(record_store) == []
    outcome = record_store.record_index_failure(memory_id, revision, "refused", T0 + timedelta(hours=1), park_after=3)
    assert outcome == IndexAttempts(attempts=1, parked=False)
    assert queue(record_store) == ["refused by a rebuild"]


def test_a_failure_of_a_parked_record_changes_nothing(record_store: RecordStore) -> None:
    memory_id, revision = stored(record_store, "parked")
    record_store.record_index_failure(memory_id, revision, "first", T0 + timedelta(hours=1), park_after=1)
    assert record_store.record_index_failure(memory_id, revision, "again", T0 + timedelta(hours=2),
                                             park_after=1) is None
    [parked] = record_store.parked_index(10)
    assert (parked.attempts, parked.last_error) == (1, "first")


def test_a_new_revision_of_a_parked_record_starts_afresh(record_store: RecordStore) -> None:
    memory_id, revision = stored(record_store, "parked then fixed")
    record_store.record_index_failure(memory_id, revision, "bad", T0 + timedelta(hours=1), park_after=1)
    assert queue(record_store) == []

    updated = record_store.update(memory_id, MemoryChanges(metadata={"fixed": True}), T0 + timedelta(hours=2))

    assert [m.id for m in record_store.pending_index(10)] == [memory_id]
    assert record_store.parked_index(10) == []
    again = record_store.record_index_failure(memory_id, updated.revision, "bad again", T0 + timedelta(hours=3),
                                              park_after=2)
    assert again == IndexAttempts(attempts=1, parked=False)


def test_indexing_a_parked_record_clears_it(record_store: RecordStore) -> None:
    memory_id, revision = stored(record_store, "rebuilt by reindex")
    record_store.record_index_failure(memory_id, revision, "bad", T0 + timedelta(hours=1), park_after=1)
    record_store.mark_indexed({memory_id: revision})
    assert record_store.parked_index(10) == [] and queue(record_store) == []
    stats = record_store.stats(T0, 0.98)
    assert (stats.pending_index, stats.parked_index) == (0, 0)


def test_requeue_parked_makes_them_pending_again_with_no_attempts(record_store: RecordStore) -> None:
    first, first_revision = stored(record_store, "first parked", 0)
    second, second_revision = stored(record_store, "second parked", 1)
    stored(record_store, "never failed", 2)
    for memory_id, revision in ((first, first_revision), (second, second_revision)):
        record_store.record_index_failure(memory_id, revision, "bad", T0 + timedelta(hours=1), park_after=1)

    assert record_store.requeue_parked(T0 + timedelta(hours=2)) == 2

    waiting = queue(record_store)
    assert waiting[0] == "never failed" and sorted(waiting[1:]) == ["first parked", "second parked"]
    assert record_store.parked_index(10) == []
    assert record_store.record_index_failure(first, first_revision, "bad", T0 + timedelta(hours=3),
                                             park_after=2) == IndexAttempts(attempts=1, parked=False)
    assert record_store.requeue_parked(T0 + timedelta(hours=4)) == 0


def test_parked_records_are_listed_oldest_first_up_to_the_limit(record_store: RecordStore) -> None:
    ids = [stored(record_store, f"poison {n}", n) for n in range(3)]
    for hour, (memory_id, revision) in zip((3, 1, 2), ids, strict=True):
        record_store.record_index_failure(memory_id, revision, "bad", T0 + timedelta(hours=hour), park_after=1)
    assert [parked.memory_id for parked in record_store.parked_index(2)] == [ids[1][0], ids[2][0]]


def test_the_record_backend_keeps_the_outbox(record_store: RecordStore) -> None:
    assert isinstance(record_store, IndexOutbox)
