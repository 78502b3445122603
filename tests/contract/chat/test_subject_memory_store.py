"""The `SubjectMemoryStore` contract (zengram/chat/ports.py), for every adapter."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from zengram.chat.domain.memories import MemoryStatus
from zengram.kernel.errors import Conflict, StaleRevision

from tests.contract.chat.conftest import ChatStores
from tests.contract.chat.helpers import at, memory


def test_a_created_memory_reads_back_as_written(stores: ChatStores) -> None:
    first = memory("User likes coffee", tags=["drinks"], metadata={"origin": "test"}, importance=80)
    written = stores.memories.create(first, [])
    assert written.memory == first and written.duplicate is None and written.superseded == []
    assert stores.memories.get(first.id) == first
    assert stores.memories.get_many([first.id, "mem_unknown"]) == {first.id: first}
    assert stores.memories.get("mem_unknown") is None


def test_the_same_text_is_active_once_per_subject(stores: ChatStores) -> None:
    first = stores.memories.create(memory("User works remotely"), []).memory
    assert first is not None
    again = stores.memories.create(memory("User works remotely", seconds=1), [])
    assert again.memory is None and again.duplicate == first
    other_subject = stores.memories.create(memory("User works remotely", subject="bob"), [])
    assert other_subject.memory is not None
    stores.memories.save(first.superseded("mem_other", at(2)), first.revision)
    assert stores.memories.create(memory("User works remotely", seconds=3), []).memory is not None


def test_concurrent_identical_creates_leave_one_memory(stores: ChatStores) -> None:
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda n: stores.memories.create(memory("User speaks Danish", seconds=n), []),
                                range(8)))
    assert sum(result.memory is not None for result in results) == 1
    assert len(stores.memories.active_of("acme", "alice", 10)) == 1


def test_create_supersedes_what_is_still_at_the_revision_read(stores: ChatStores) -> None:
    blueberry = stores.memories.create(memory("Favorite fruit is blueberry"), []).memory
    cherry = stores.memories.create(memory("Favorite fruit is cherry", seconds=1), []).memory
    assert blueberry is not None and cherry is not None
    changed = stores.memories.save(cherry.patched({"importance": 90}, at(2)), cherry.revision)  # cherry moved on
    apple = memory("Favorite fruit is apple", seconds=3)
    written = stores.memories.create(apple, [blueberry.superseded(apple.id, at(3)), cherry.superseded(apple.id, at(3))])
    assert [m.id for m in written.superseded] == [blueberry.id]
    stored_blueberry = stores.memories.get(blueberry.id)
    assert stored_blueberry is not None and stored_blueberry.status is MemoryStatus.SUPERSEDED
    assert stored_blueberry.superseded_by == apple.id
    assert stores.memories.get(cherry.id) == changed


def test_save_needs_the_revision_read(stores: ChatStores) -> None:
    note = stores.memories.create(memory("User is travelling next week"), []).memory
    assert note is not None
    saved = stores.memories.save(note.patched({"importance": 10}, at(1)), note.revision)
    assert saved.importance == 10 and saved.revision == note.revision + 1
    with pytest.raises(StaleRevision):
        stores.memories.save(note.patched({"importance": 20}, at(2)), note.revision)
    assert stores.memories.get(note.id) == saved


def test_save_refuses_a_second_active_copy_of_a_text(stores: ChatStores) -> None:
    first = stores.memories.create(memory("User owns a cat"), []).memory
    assert first is not None
    replaced = stores.memories.save(first.superseded("mem_x", at(1)), first.revision)
    assert stores.memories.create(memory("User owns a cat", seconds=2), []).memory is not None
    with pytest.raises(Conflict):
        stores.memories.save(replaced.restored(at(3)), replaced.revision)


def test_listing_is_newest_first_by_status_and_subject(stores: ChatStores) -> None:
    created = [stores.memories.create(memory(f"fact number {n}", seconds=n), []).memory for n in range(5)]
    assert all(created)
    stores.memories.create(memory("another subject's fact", subject="bob"), [])
    stores.memories.create(memory("another project's fact", project="globex"), [])
    old, deleted = created[0], created[1]
    assert old is not None and deleted is not None
    stores.memories.save(old.superseded("mem_new", at(10)), old.revision)
    stores.memories.save(deleted.deleted(at(11)), deleted.revision)

    def listed(**options: object) -> list[str]:
        defaults: dict[str, object] = {"statuses": ["active"], "include_deleted": False, "limit": 10, "offset": 0}
        found = stores.memories.of_subject("acme", "alice", **{**defaults, **options})  # type: ignore[arg-type]
        return [m.text for m in found]

    assert listed() == ["fact number 4", "fact number 3", "fact number 2"]
    assert listed(statuses=["superseded"]) == ["fact number 0"]
    assert listed(statuses=["active", "superseded"], include_deleted=True) == [f"fact number {n}"
                                                                               for n in (4, 3, 2, 1, 0)]
    assert listed(limit=1, offset=1) == ["fact number 3"]
    assert [m.text for m in stores.memories.active_of("acme", "alice", 2)] == ["fact number 4", "fact number 3"]


def test_recalls_are_counted_without_losing_any(stores: ChatStores) -> None:
    liked = stores.memories.create(memory("User likes tea"), []).memory
    assert liked is not None
    stores.memories.record_recall([liked.id, liked.id, "mem_unknown"], at(5))
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda n: stores.memories.record_recall([liked.id], at(6 + n)), range(16)))
    counted = stores.memories.get(liked.id)
    assert counted is not None and counted.seen_count == 18 and counted.last_seen_at is not None
    assert counted.revision == liked.revision  # counting is no edit
    edited = stores.memories.save(liked.patched({"importance": 70}, at(30)), liked.revision)
    assert edited.seen_count == 18  # an edit computed from an older read keeps the count


def test_every_write_waits_for_the_index_until_marked(stores: ChatStores) -> None:
    first = stores.memories.create(memory("User plays chess"), []).memory
    assert first is not None
    assert [m.id for m in stores.memories.pending_index(10)] == [first.id]
    stores.memories.mark_indexed({first.id: first.revision})
    assert stores.memories.pending_index(10) == []
    edited = stores.memories.save(first.patched({"kind": "preference"}, at(1)), first.revision)
    stores.memories.mark_indexed({first.id: first.revision})  # an older revision: the edit stays pending
    assert [m.revision for m in stores.memories.pending_index(10)] == [edited.revision]
    stores.memories.mark_indexed({first.id: edited.revision})
    assert stores.memories.pending_index(10) == []
    assert [m.id for m in stores.memories.iter_all()] == [first.id]
