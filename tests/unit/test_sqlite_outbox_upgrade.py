"""A records file written before the index outbox counted attempts opens, keeps its pending records queued in the
order of their changes, and takes the new outbox calls."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

from zengram.adapters.sqlite import SQLiteRecordStore

from tests.contract.test_record_store import T0, make_memory


def written_by_an_earlier_version(path: Path) -> list[str]:
    """Three pending memories in a file without the outbox columns (and their indexes)."""
    store = SQLiteRecordStore(path)
    memories = [make_memory(f"memory {n}", at=T0 + timedelta(minutes=n)) for n in range(3)]
    for memory in memories:
        store.create_or_corroborate(memory, max_observers=20)
    store.close()
    with sqlite3.connect(path) as connection:
        connection.execute("DROP INDEX memories_index_queue")
        connection.execute("DROP INDEX memories_index_parked")
        for column in ("index_attempts", "index_error", "index_queued_at"):
            connection.execute(f"ALTER TABLE memories DROP COLUMN {column}")
    return [memory.id for memory in memories]


def test_an_older_file_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "records.sqlite3"
    ids = written_by_an_earlier_version(path)

    store = SQLiteRecordStore(path)
    try:
        assert [memory.id for memory in store.pending_index(10)] == ids
        outcome = store.record_index_failure(ids[0], 1, "refused", T0 + timedelta(hours=1), park_after=1)
        assert outcome is not None and outcome.parked
        assert [parked.memory_id for parked in store.parked_index(10)] == [ids[0]]
        assert [memory.id for memory in store.pending_index(10)] == ids[1:]
    finally:
        store.close()
    SQLiteRecordStore(path).close()  # and opening it again changes nothing
