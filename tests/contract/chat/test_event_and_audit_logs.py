"""The `MemoryEventLog` and `AuditLog` contracts (zengram/chat/ports.py), for every adapter: SQLite (the records
file) and DynamoDB (moto). Numbering is gap-free per subject under concurrent appenders; reads never cross a
project or subject; the audit lists newest first with its filters and cursor."""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from zengram.chat.domain.events import AuditEntry, MemoryEventType, NewMemoryEvent, audit_id
from zengram.chat.ports import AuditLog, MemoryEventLog

from tests.contract.chat.helpers import at


@dataclass
class Logs:
    events: MemoryEventLog
    audit: AuditLog


@contextmanager
def _sqlite(folder: Path) -> Iterator[Logs]:
    from zengram.adapters.sqlite.chat_events import SQLiteAuditLog, SQLiteMemoryEventLog

    events, audit = SQLiteMemoryEventLog(folder / "records.sqlite3"), SQLiteAuditLog(folder / "records.sqlite3")
    yield Logs(events, audit)
    events.close()
    audit.close()


@contextmanager
def _dynamodb(_: Path) -> Iterator[Logs]:
    if not all(importlib.util.find_spec(name) for name in ("boto3", "moto")):
        pytest.skip("boto3 and moto[server] are needed: pip install -e '.[dev]'")
    from zengram.adapters.dynamodb.chat_events import DynamoDBAuditLog, DynamoDBMemoryEventLog

    from tests.aws_support import fresh_dynamodb_store

    with fresh_dynamodb_store() as table:
        yield Logs(DynamoDBMemoryEventLog(table.table_name, client=table.client),
                   DynamoDBAuditLog(table.table_name, client=table.client))


@pytest.fixture(params=["sqlite", "dynamodb"])
def logs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Logs]:
    with {"sqlite": _sqlite, "dynamodb": _dynamodb}[request.param](tmp_path) as built:
        yield built


def event(text: str, *, project: str = "acme", subject: str = "alice", seconds: float = 0,
          kind: MemoryEventType = MemoryEventType.CREATED) -> NewMemoryEvent:
    return NewMemoryEvent(project_id=project, subject_id=subject, type=kind, data={"text": text},
                          created_at=at(seconds))


def test_events_are_numbered_per_subject_and_read_back_in_order(logs: Logs) -> None:
    first = logs.events.append([event("a"), event("b", kind=MemoryEventType.SUPERSEDED)])
    assert [(e.seq, e.data["text"], e.type) for e in first] == [(1, "a", MemoryEventType.CREATED),
                                                                (2, "b", MemoryEventType.SUPERSEDED)]
    assert [e.seq for e in logs.events.append([event("c")])] == [3]
    assert [e.seq for e in logs.events.append([event("x", subject="bob"), event("y", project="globex")])] == [1, 1]

    read = logs.events.since("acme", "alice", 0, 10)
    assert [(e.seq, e.data["text"], e.created_at) for e in read] == [(1, "a", at(0)), (2, "b", at(0)),
                                                                      (3, "c", at(0))]
    assert [e.seq for e in logs.events.since("acme", "alice", 1, 10)] == [2, 3]
    assert [e.seq for e in logs.events.since("acme", "alice", 0, 2)] == [1, 2]
    assert logs.events.since("acme", "alice", 3, 10) == []
    assert [e.data["text"] for e in logs.events.since("acme", "bob", 0, 10)] == ["x"]
    assert [e.data["text"] for e in logs.events.since("globex", "alice", 0, 10)] == ["y"]
    assert logs.events.since("nobody", "alice", 0, 10) == []
    assert (logs.events.last("acme", "alice"), logs.events.last("acme", "bob"), logs.events.last("nobody", "x")) == (
        3, 1, 0)


def test_concurrent_appenders_leave_no_gap_and_no_duplicate(logs: Logs) -> None:
    def write(writer: int) -> None:
        for n in range(5):
            logs.events.append([event(f"{writer}-{n}")])

    threads = [threading.Thread(target=write, args=(writer,)) for writer in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    read = logs.events.since("acme", "alice", 0, 100)
    assert [e.seq for e in read] == list(range(1, 21))
    assert sorted(e.data["text"] for e in read) == sorted(f"{w}-{n}" for w in range(4) for n in range(5))
    for writer in range(4):  # each writer's events in the order it wrote them
        mine = [e.data["text"] for e in read if e.data["text"].startswith(f"{writer}-")]
        assert mine == [f"{writer}-{n}" for n in range(5)]


def row(seconds: float, *, project: str = "acme", subject: str | None = "alice", session: str | None = None,
        route: str = "/api/v1/memories") -> AuditEntry:
    return AuditEntry(id=audit_id(at(seconds)), project_id=project, key_id="k1", key_name="app", method="GET",
                      route=route, status=200, duration_ms=3, subject_id=subject, session_id=session,
                      created_at=at(seconds), total_tokens=12)


def test_the_audit_lists_a_projects_rows_newest_first(logs: Logs) -> None:
    rows = [row(1), row(2, session="s1"), row(3, subject="bob", session="s1"), row(4, project="globex")]
    for entry in rows:
        logs.audit.record(entry)
    assert logs.audit.recent("acme", 10) == [rows[2], rows[1], rows[0]]
    assert logs.audit.recent("acme", 2) == [rows[2], rows[1]]
    assert logs.audit.recent("acme", 10, before=rows[1].id) == [rows[0]]
    assert logs.audit.recent("acme", 10, subject_id="alice") == [rows[1], rows[0]]
    assert logs.audit.recent("acme", 10, session_id="s1") == [rows[2], rows[1]]
    assert logs.audit.recent("acme", 10, subject_id="alice", session_id="s1") == [rows[1]]
    assert logs.audit.recent("globex", 10) == [rows[3]]
    assert logs.audit.recent("initech", 10) == []


def test_pruning_removes_old_rows_where_the_store_prunes(logs: Logs) -> None:
    """SQLite deletes what retention has passed; DynamoDB leaves it to the table's TTL (`ttl` on each item)."""
    logs.events.append([event("old", seconds=0), event("new", seconds=100)])
    logs.audit.record(row(0))
    logs.audit.record(row(100))
    pruned = logs.events.prune(at(50)) + logs.audit.prune(at(50))
    expected_left = 1 if pruned else 2
    assert len(logs.events.since("acme", "alice", 0, 10)) == expected_left
    assert len(logs.audit.recent("acme", 10)) == expected_left
    assert logs.events.last("acme", "alice") == 2  # pruning keeps the position
    assert [e.seq for e in logs.events.append([event("next", seconds=101)])] == [3]  # numbering never restarts
