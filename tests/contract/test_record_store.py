"""The `RecordStore` contract (see zengram.memory.ports.RecordStore), for every adapter."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from zengram.kernel.content import content_hash
from zengram.kernel.errors import Conflict, NotFound, StaleRevision
from zengram.memory.domain.models import (
    Importance,
    ImportKind,
    ImportOutcome,
    Memory,
    MemoryChanges,
    MemoryType,
    RecordQuery,
    WriteKind,
)
from zengram.memory.ports import RecordStore

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def make_memory(content: str = "Acme deploys on Fridays", *, at: datetime = T0, **fields: Any) -> Memory:
    values: dict[str, Any] = {
        "id": str(uuid.uuid4()), "type": MemoryType.EVENT, "source_agent": "claude-code", "client_id": "acme",
        "created_at": at, "updated_at": at, "observed_by": [fields.get("source_agent", "claude-code")],
    }
    values.update(fields)
    return Memory(content=content, content_hash=content_hash(content), **values)


def test_created_memory_reads_back_with_every_field(record_store: RecordStore) -> None:
    memory = make_memory(
        "Deploy pipeline is green", type=MemoryType.STATUS, subject="deploy-pipeline", status_value="green",
        importance=Importance.HIGH, metadata={"ticket": {"id": 7, "tags": ["ci"]}},
        valid_from=T0 - timedelta(days=1), valid_to=T0 + timedelta(days=1),
    )
    outcome = record_store.create_or_corroborate(memory, max_observers=20)
    assert outcome.kind is WriteKind.CREATED
    assert record_store.get(memory.id) == memory
    assert record_store.get_many([memory.id, "missing"]) == {memory.id: memory}
    assert record_store.count() == 1


def test_same_agent_same_content_is_deduplicated(record_store: RecordStore) -> None:
    first = make_memory()
    record_store.create_or_corroborate(first, max_observers=20)
    outcome = record_store.create_or_corroborate(make_memory(), max_observers=20)
    assert outcome.kind is WriteKind.DEDUPLICATED
    assert outcome.memory.id == first.id
    assert record_store.count() == 1


def test_dedup_is_scoped_to_client_and_type(record_store: RecordStore) -> None:
    record_store.create_or_corroborate(make_memory(), max_observers=20)
    other_client = record_store.create_or_corroborate(make_memory(client_id="globex"), max_observers=20)
    other_type = record_store.create_or_corroborate(make_memory(type=MemoryType.DECISION), max_observers=20)
    assert other_client.kind is WriteKind.CREATED
    assert other_type.kind is WriteKind.CREATED


def test_another_agent_corroborates_up_to_the_observer_cap(record_store: RecordStore) -> None:
    first = make_memory()
    record_store.create_or_corroborate(first, max_observers=3)
    for agent in ("n8n", "cursor", "codex", "gemini"):
        outcome = record_store.create_or_corroborate(
            make_memory(source_agent=agent, at=T0 + timedelta(minutes=1)), max_observers=3)
        assert outcome.kind is WriteKind.CORROBORATED
    stored = record_store.get(first.id)
    assert stored is not None
    assert stored.observed_by == ["claude-code", "n8n", "cursor"]
    assert stored.observation_count == 5
    assert stored.last_observed_at == T0 + timedelta(minutes=1)
    again = record_store.create_or_corroborate(make_memory(source_agent="n8n"), max_observers=3)
    assert again.kind is WriteKind.DEDUPLICATED


def test_fact_with_same_key_supersedes_within_the_client_only(record_store: RecordStore) -> None:
    old = make_memory("Stack is Next.js 14", type=MemoryType.FACT, key="stack")
    elsewhere = make_memory("Stack is Rails", type=MemoryType.FACT, key="stack", client_id="globex")
    record_store.create_or_corroborate(old, max_observers=20)
    record_store.create_or_corroborate(elsewhere, max_observers=20)
    later = T0 + timedelta(hours=1)
    new = make_memory("Stack is Next.js 15", type=MemoryType.FACT, key="stack", at=later)
    outcome = record_store.create_or_corroborate(new, max_observers=20)

    assert outcome.kind is WriteKind.CREATED
    assert outcome.memory.supersedes == old.id
    assert outcome.superseded is not None and outcome.superseded.id == old.id
    previous = record_store.get(old.id)
    assert previous is not None
    assert (previous.active, previous.superseded_by, previous.superseded_at, previous.valid_to) == (
        False, new.id, later, later)
    untouched = record_store.get(elsewhere.id)
    assert untouched is not None and untouched.active


def test_status_with_same_subject_supersedes(record_store: RecordStore) -> None:
    green = make_memory("pipeline green", type=MemoryType.STATUS, subject="pipeline", status_value="green")
    red = make_memory("pipeline red", type=MemoryType.STATUS, subject="pipeline", status_value="red")
    record_store.create_or_corroborate(green, max_observers=20)
    assert record_store.create_or_corroborate(red, max_observers=20).memory.supersedes == green.id
    actives = record_store.query(RecordQuery(type=MemoryType.STATUS, subject="pipeline"))
    assert [memory.id for memory in actives] == [red.id]


def test_update_replaces_fields_and_bumps_revision(record_store: RecordStore) -> None:
    memory = make_memory()
    record_store.create_or_corroborate(memory, max_observers=20)
    later = T0 + timedelta(minutes=5)
    new_text = "Acme deploys on Mondays"
    changes = MemoryChanges(content=new_text, content_hash=content_hash(new_text), importance=Importance.CRITICAL)
    updated = record_store.update(memory.id, changes, later)
    assert updated.content == "Acme deploys on Mondays"
    assert updated.importance is Importance.CRITICAL
    assert updated.updated_at == later
    assert updated.revision == memory.revision + 1
    assert record_store.get(memory.id) == updated


def test_update_refuses_duplicate_content_deleted_and_unknown(record_store: RecordStore) -> None:
    first, second = make_memory("first note"), make_memory("second note")
    for memory in (first, second):
        record_store.create_or_corroborate(memory, max_observers=20)
    duplicate = MemoryChanges(content="first note", content_hash=content_hash("first note"))
    with pytest.raises(Conflict):
        record_store.update(second.id, duplicate, T0)
    record_store.soft_delete(second.id, "claude-code", None, T0)
    with pytest.raises(Conflict):
        record_store.update(second.id, MemoryChanges(importance=Importance.LOW), T0)
    with pytest.raises(NotFound):
        record_store.update("missing", MemoryChanges(importance=Importance.LOW), T0)


def test_an_update_expecting_a_stale_revision_changes_nothing(record_store: RecordStore) -> None:
    # Given a memory read by a slow writer (consolidation before its LLM call), then PATCHed by someone else
    memory = make_memory(metadata={"ticket": "OPS-1"})
    record_store.create_or_corroborate(memory, max_observers=20)
    read = record_store.get(memory.id)
    assert read is not None
    patched = record_store.update(memory.id, MemoryChanges(metadata={"ticket": "OPS-7"}), T0 + timedelta(minutes=1))
    link = {"memory_id": "other", "relation": "same project"}
    # When the slow writer writes what it computed from its read, expecting the revision it read
    with pytest.raises(StaleRevision):
        record_store.update(memory.id, MemoryChanges(metadata={**read.metadata, "connections": [link]}),
                            T0 + timedelta(minutes=2), expected_revision=read.revision)
    # Then nothing changed (the PATCH is kept); re-read and re-applied, the change goes through on top of it
    assert record_store.get(memory.id) == patched
    fresh = record_store.get(memory.id)
    assert fresh is not None
    applied = record_store.update(memory.id, MemoryChanges(metadata={**fresh.metadata, "connections": [link]}),
                                  T0 + timedelta(minutes=3), expected_revision=fresh.revision)
    assert applied.metadata == {"ticket": "OPS-7", "connections": [link]}
    assert applied.revision == patched.revision + 1 and record_store.get(memory.id) == applied
    assert issubclass(StaleRevision, Conflict)


def test_concurrent_updates_expecting_one_revision_have_exactly_one_winner(record_store: RecordStore) -> None:
    memory = make_memory()
    record_store.create_or_corroborate(memory, max_observers=20)

    def attempt(writer: int) -> int | None:
        try:
            record_store.update(memory.id, MemoryChanges(metadata={"writer": writer}), T0,
                                expected_revision=memory.revision)
        except StaleRevision:
            return None
        return writer

    with ThreadPoolExecutor(max_workers=8) as pool:
        winners = [writer for writer in pool.map(attempt, range(8)) if writer is not None]
    assert len(winners) == 1
    after = record_store.get(memory.id)
    assert after is not None and after.metadata == {"writer": winners[0]} and after.revision == memory.revision + 1


def test_soft_delete_is_idempotent_and_hides_from_queries(record_store: RecordStore) -> None:
    memory = make_memory()
    record_store.create_or_corroborate(memory, max_observers=20)
    deleted = record_store.soft_delete(memory.id, "n8n", "wrong", T0 + timedelta(minutes=1))
    assert (deleted.active, deleted.deleted_by, deleted.delete_reason) == (False, "n8n", "wrong")
    again = record_store.soft_delete(memory.id, "other", "again", T0 + timedelta(minutes=2))
    assert again.deleted_at == deleted.deleted_at and again.deleted_by == "n8n"
    assert record_store.query(RecordQuery(include_inactive=True)) == []
    # A deleted memory no longer blocks the same content from being stored again.
    assert record_store.create_or_corroborate(make_memory(), max_observers=20).kind is WriteKind.CREATED
    with pytest.raises(NotFound):
        record_store.soft_delete("missing", "n8n", None, T0)


def test_restore_reactivates_and_supersedes_the_current_holder(record_store: RecordStore) -> None:
    old = make_memory("plan A", type=MemoryType.FACT, key="plan")
    new = make_memory("plan B", type=MemoryType.FACT, key="plan", at=T0 + timedelta(hours=1))
    record_store.create_or_corroborate(old, max_observers=20)
    record_store.create_or_corroborate(new, max_observers=20)
    changed = record_store.restore(old.id, T0 + timedelta(hours=2))
    assert [memory.id for memory in changed] == [old.id, new.id]
    restored, displaced = record_store.get(old.id), record_store.get(new.id)
    assert restored is not None and displaced is not None
    assert restored.active and restored.superseded_by is None and restored.valid_to is None
    assert not displaced.active and displaced.superseded_by == old.id
    assert record_store.restore(old.id, T0) == [restored]  # already active: nothing changes


def test_restore_refuses_deleted_memories(record_store: RecordStore) -> None:
    memory = make_memory()
    record_store.create_or_corroborate(memory, max_observers=20)
    record_store.soft_delete(memory.id, "claude-code", None, T0)
    with pytest.raises(Conflict):
        record_store.restore(memory.id, T0)
    with pytest.raises(NotFound):
        record_store.restore("missing", T0)


def test_record_access_counts_every_occurrence(record_store: RecordStore) -> None:
    a, b = make_memory("a note"), make_memory("b note")
    for memory in (a, b):
        record_store.create_or_corroborate(memory, max_observers=20)
    record_store.record_access([a.id, a.id, b.id], T0 + timedelta(days=1))
    record_store.record_access([a.id], T0 + timedelta(days=2))
    stored_a, stored_b = record_store.get(a.id), record_store.get(b.id)
    assert stored_a is not None and stored_b is not None
    assert (stored_a.access_count, stored_a.last_accessed_at) == (3, T0 + timedelta(days=2))
    assert (stored_b.access_count, stored_b.last_accessed_at) == (1, T0 + timedelta(days=1))
    assert stored_a.revision == a.revision  # access is not a change the index needs to see


def test_query_filters_and_orders_newest_first(record_store: RecordStore) -> None:
    memories = [make_memory(f"event {i}", at=T0 + timedelta(minutes=i), source_agent="n8n" if i % 2 else "cc")
                for i in range(6)]
    for memory in memories:
        record_store.create_or_corroborate(memory, max_observers=20)
    everything = record_store.query(RecordQuery(type=MemoryType.EVENT))
    assert [m.id for m in everything] == [m.id for m in reversed(memories)]
    by_agent = record_store.query(RecordQuery(source_agent="n8n"))
    assert [m.content for m in by_agent] == ["event 5", "event 3", "event 1"]
    since = record_store.query(RecordQuery(since=T0 + timedelta(minutes=4)))
    assert [m.content for m in since] == ["event 5", "event 4"]
    page = record_store.query(RecordQuery(limit=2, offset=1))
    assert [m.content for m in page] == ["event 4", "event 3"]
    assert record_store.query(RecordQuery(client_id="globex")) == []


def test_query_includes_superseded_only_when_asked(record_store: RecordStore) -> None:
    old = make_memory("v1", type=MemoryType.FACT, key="version")
    new = make_memory("v2", type=MemoryType.FACT, key="version", at=T0 + timedelta(seconds=1))
    for memory in (old, new):
        record_store.create_or_corroborate(memory, max_observers=20)
    assert [m.id for m in record_store.query(RecordQuery(key="version"))] == [new.id]
    assert [m.id for m in record_store.query(RecordQuery(key="version", include_inactive=True))] == [new.id, old.id]


def test_iter_all_pages_through_everything(record_store: RecordStore) -> None:
    memories = [make_memory(f"note {i}", at=T0 + timedelta(seconds=i % 3)) for i in range(7)]
    for memory in memories:
        record_store.create_or_corroborate(memory, max_observers=20)
    record_store.soft_delete(memories[0].id, "cc", None, T0)
    seen = [memory.id for memory in record_store.iter_all(batch_size=2)]
    assert sorted(seen) == sorted(m.id for m in memories[1:])
    assert len(list(record_store.iter_all(include_deleted=True, batch_size=3))) == 7


def test_pending_marks_survive_a_racing_change(record_store: RecordStore) -> None:
    memory = make_memory()
    record_store.create_or_corroborate(memory, max_observers=20)
    assert [m.id for m in record_store.pending_index(10)] == [memory.id]
    updated = record_store.update(memory.id, MemoryChanges(importance=Importance.HIGH), T0)
    record_store.mark_indexed({memory.id: memory.revision})  # the indexer saw the old revision
    assert [m.id for m in record_store.pending_index(10)] == [memory.id]
    record_store.mark_indexed({memory.id: updated.revision})
    assert record_store.pending_index(10) == []


def test_parallel_identical_writes_leave_one_memory(record_store: RecordStore) -> None:
    with ThreadPoolExecutor(max_workers=16) as pool:
        outcomes = list(pool.map(lambda _: record_store.create_or_corroborate(make_memory(), max_observers=20),
                                 range(50)))
    assert sum(outcome.kind is WriteKind.CREATED for outcome in outcomes) == 1
    assert len({outcome.memory.id for outcome in outcomes}) == 1
    assert record_store.count() == 1


def test_parallel_writes_of_one_key_leave_exactly_one_active(record_store: RecordStore) -> None:
    def write(i: int) -> None:
        record_store.create_or_corroborate(
            make_memory(f"price is {i}", type=MemoryType.FACT, key="price", at=T0 + timedelta(milliseconds=i)),
            max_observers=20)

    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(write, range(50)))
    all_versions = record_store.query(RecordQuery(key="price", include_inactive=True, limit=100))
    active = [memory for memory in all_versions if memory.active]
    assert len(all_versions) == 50
    assert len(active) == 1
    # Every superseded version points at a memory that exists: the chain has no dangling links.
    ids = {memory.id for memory in all_versions}
    assert all(memory.superseded_by in ids for memory in all_versions if not memory.active)


def test_parallel_access_counting_loses_nothing(record_store: RecordStore) -> None:
    memory = make_memory()
    record_store.create_or_corroborate(memory, max_observers=20)
    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(lambda _: record_store.record_access([memory.id], T0), range(200)))
    stored = record_store.get(memory.id)
    assert stored is not None and stored.access_count == 200


# -- import (POST /export/import) and export listing -------------------------------------------------------


def test_import_writes_the_memory_exactly_as_given(record_store: RecordStore) -> None:
    memory = make_memory(
        "Acme renewed for two years", type=MemoryType.DECISION, importance=Importance.CRITICAL,
        metadata={"deal": {"years": 2}}, observed_by=["claude-code", "n8n"], observation_count=3,
        last_observed_at=T0 + timedelta(hours=1), access_count=7, last_accessed_at=T0 + timedelta(hours=2),
        updated_at=T0 + timedelta(hours=3), revision=4, confidence=0.75, consolidated=True,
    )
    outcome = record_store.import_memory(memory)
    assert outcome.kind is ImportKind.IMPORTED
    assert record_store.get(memory.id) == memory
    assert [m.id for m in record_store.pending_index(10)] == [memory.id]
    record_store.mark_indexed({memory.id: 4})
    assert record_store.pending_index(10) == []


def test_import_refuses_an_existing_id_and_active_duplicates(record_store: RecordStore) -> None:
    held = make_memory("Stack is Next.js 14", type=MemoryType.FACT, key="stack")
    record_store.create_or_corroborate(held, max_observers=20)
    same_id = make_memory("Something else entirely", id=held.id)
    same_content = make_memory("Stack is Next.js 14", type=MemoryType.FACT, key="other-key")
    same_key = make_memory("Stack is Next.js 15", type=MemoryType.FACT, key="stack")
    assert record_store.import_memory(same_id) == ImportOutcome(kind=ImportKind.DUPLICATE_ID, existing_id=held.id)
    assert record_store.import_memory(same_content) == ImportOutcome(
        kind=ImportKind.DUPLICATE_CONTENT, existing_id=held.id)
    assert record_store.import_memory(same_key) == ImportOutcome(kind=ImportKind.LABEL_HELD, existing_id=held.id)
    assert record_store.count() == 1
    assert record_store.get(held.id) == held  # nothing superseded, nothing changed


def test_imported_inactive_memories_take_no_uniqueness_slot(record_store: RecordStore) -> None:
    later = T0 + timedelta(hours=1)
    old = make_memory("Stack is Next.js 14", type=MemoryType.FACT, key="stack", active=False,
                      superseded_at=later, valid_to=later, superseded_by="newer-id")
    gone = make_memory("Stack is Next.js 15", type=MemoryType.FACT, key="stack", active=False,
                       deleted_at=later, deleted_by="claude-code", delete_reason="wrong")
    assert record_store.import_memory(old).kind is ImportKind.IMPORTED
    assert record_store.import_memory(gone).kind is ImportKind.IMPORTED
    # The key and the contents are still free for an active memory, imported or created.
    current = make_memory("Stack is Next.js 14", type=MemoryType.FACT, key="stack", id="newer-id",
                          supersedes=old.id, at=later)
    assert record_store.import_memory(current).kind is ImportKind.IMPORTED
    created = record_store.create_or_corroborate(
        make_memory("Stack is Next.js 15", type=MemoryType.FACT, key="stack", at=later + timedelta(hours=1)),
        max_observers=20)
    assert created.kind is WriteKind.CREATED and created.superseded is not None
    assert created.superseded.id == current.id  # the imported active fact held the key like any other
    assert record_store.get(gone.id) == gone
    assert record_store.get(old.id) == old


def test_imported_active_memory_dedups_later_writes(record_store: RecordStore) -> None:
    imported = make_memory("Acme deploys on Fridays", source_agent="n8n", observed_by=["n8n"])
    record_store.import_memory(imported)
    outcome = record_store.create_or_corroborate(make_memory("Acme deploys on Fridays"), max_observers=20)
    assert outcome.kind is WriteKind.CORROBORATED and outcome.memory.id == imported.id


def test_parallel_imports_of_one_id_store_it_once(record_store: RecordStore) -> None:
    memory = make_memory()
    with ThreadPoolExecutor(max_workers=8) as pool:
        kinds = list(pool.map(lambda _: record_store.import_memory(memory).kind, range(8)))
    assert kinds.count(ImportKind.IMPORTED) == 1
    assert set(kinds) == {ImportKind.IMPORTED, ImportKind.DUPLICATE_ID}
    assert record_store.count() == 1


def test_a_tenant_scope_lists_its_clients_only_in_order(record_store: RecordStore) -> None:
    clients = ["acme", "globex", "initech", "global"]
    memories = [make_memory(f"note {i}", client_id=clients[i % 4], at=T0 + timedelta(minutes=i // 2))
                for i in range(12)]  # pairs share a created_at: the id breaks the tie across partitions too
    for memory in memories:
        record_store.create_or_corroborate(memory, max_observers=20)
    record_store.soft_delete(memories[0].id, "cc", None, T0 + timedelta(hours=1))
    scope = ("acme", "global")
    mine = [m for m in memories if m.client_id in scope]
    newest_first = sorted(mine[1:], key=lambda m: (m.created_at, m.id), reverse=True)
    found = record_store.query(RecordQuery(client_ids=scope, limit=50))
    assert [m.id for m in found] == [m.id for m in newest_first]
    page = record_store.query(RecordQuery(client_ids=scope, limit=2, offset=1))
    assert [m.id for m in page] == [m.id for m in newest_first[1:3]]
    everything = RecordQuery(client_ids=scope, include_deleted=True, include_inactive=True, oldest_first=True)
    oldest_first = sorted(mine, key=lambda m: (m.created_at, m.id))
    assert [m.id for m in record_store.query(everything)] == [m.id for m in oldest_first]
    assert [m.id for m in record_store.query(RecordQuery(client_ids=scope, client_id="globex"))] == []
    assert {m.client_id for m in record_store.query(RecordQuery(client_ids=scope, client_id="global"))} == {"global"}
    assert record_store.query(RecordQuery(client_ids=("nobody",))) == []
    assert record_store.query(RecordQuery(client_ids=())) == []
    assert [m.id for m in record_store.iter_all(client_ids=scope, batch_size=2)] == [m.id for m in oldest_first[1:]]
    assert [m.id for m in record_store.iter_all(client_ids=scope, include_deleted=True)] == [
        m.id for m in oldest_first]
    assert list(record_store.iter_all(client_ids=())) == []


def test_query_oldest_first_with_deleted_memories(record_store: RecordStore) -> None:
    first = make_memory("one", at=T0)
    second = make_memory("two", at=T0 + timedelta(minutes=1))
    third = make_memory("three", at=T0 + timedelta(minutes=2))
    for memory in (first, second, third):
        record_store.create_or_corroborate(memory, max_observers=20)
    record_store.soft_delete(second.id, "claude-code", None, T0 + timedelta(minutes=3))
    everything = RecordQuery(include_inactive=True, include_deleted=True, oldest_first=True, limit=10)
    assert [m.id for m in record_store.query(everything)] == [first.id, second.id, third.id]
    assert [m.id for m in record_store.query(everything.model_copy(update={"offset": 1, "limit": 1}))] == [second.id]
    live = RecordQuery(oldest_first=True, client_id="acme", limit=10)
    assert [m.id for m in record_store.query(live)] == [first.id, third.id]
    newest = RecordQuery(include_inactive=True, include_deleted=True, limit=10)
    assert [m.id for m in record_store.query(newest)] == [third.id, second.id, first.id]


def test_the_adapter_is_a_record_store(record_store: RecordStore) -> None:
    assert isinstance(record_store, RecordStore)


def _thread(record_store: RecordStore, count: int, **fields: Any) -> list[Memory]:
    turns = [make_memory(f"turn {n}", at=T0 + timedelta(seconds=n), **fields) for n in range(count)]
    for turn in turns:
        record_store.create_or_corroborate(turn, max_observers=20)
    return turns


def test_thread_neighbours_are_the_nearest_live_events_of_the_thread_each_side(record_store: RecordStore) -> None:
    turns = _thread(record_store, 8)
    record_store.create_or_corroborate(make_memory("other agent", at=T0 + timedelta(seconds=4.5),
                                                   source_agent="cursor"), max_observers=20)
    record_store.create_or_corroborate(make_memory("other client", at=T0 + timedelta(seconds=4.5),
                                                   client_id="globex"), max_observers=20)
    record_store.create_or_corroborate(make_memory("a fact", type=MemoryType.FACT, at=T0 + timedelta(seconds=4.5)),
                                       max_observers=20)
    record_store.soft_delete(turns[3].id, "cc", None, T0 + timedelta(minutes=1))
    record_store.supersede_by([turns[6].id], turns[0].id, T0 + timedelta(minutes=1))  # no longer active

    found = record_store.thread_neighbours(turns[5], before=2, after=2)
    assert [m.id for m in found.previous] == [turns[2].id, turns[4].id]  # oldest first; deleted 3 skipped
    assert [m.id for m in found.following] == [turns[7].id]  # superseded 6 skipped, then the thread ends
    assert found.previous[1] == record_store.get(turns[4].id)  # whole memories
    assert record_store.thread_neighbours(turns[5], before=0, after=0) == record_store.thread_neighbours(
        turns[0], before=3, after=0)
    assert [m.id for m in record_store.thread_neighbours(turns[5], before=1, after=0).previous] == [turns[4].id]


def test_thread_neighbours_of_a_memory_not_yet_stored(record_store: RecordStore) -> None:
    turns = _thread(record_store, 4)
    coming = make_memory("turn 1.5", at=T0 + timedelta(seconds=1.5))
    found = record_store.thread_neighbours(coming, before=4, after=4)
    assert [m.id for m in found.previous] == [turns[0].id, turns[1].id]
    assert [m.id for m in found.following] == [turns[2].id, turns[3].id]
    newest = make_memory("turn 9", at=T0 + timedelta(hours=1))
    assert [m.id for m in record_store.thread_neighbours(newest, before=1, after=1).previous] == [turns[3].id]


def test_thread_neighbours_sharing_a_timestamp_are_ordered_by_id(record_store: RecordStore) -> None:
    same = sorted((make_memory(f"same moment {n}") for n in range(3)), key=lambda m: m.id)
    for memory in same:
        record_store.create_or_corroborate(memory, max_observers=20)
    found = record_store.thread_neighbours(same[1], before=5, after=5)
    assert ([m.id for m in found.previous], [m.id for m in found.following]) == ([same[0].id], [same[2].id])


def test_a_restored_event_is_a_neighbour_again(record_store: RecordStore) -> None:
    turns = _thread(record_store, 3)
    record_store.supersede_by([turns[1].id], turns[0].id, T0 + timedelta(minutes=1))
    assert [m.id for m in record_store.thread_neighbours(turns[2], before=1, after=0).previous] == [turns[0].id]
    record_store.restore(turns[1].id, T0 + timedelta(minutes=2))
    assert [m.id for m in record_store.thread_neighbours(turns[2], before=1, after=0).previous] == [turns[1].id]
