"""WAL checkpoints run beside the writers (#18): a commit never copies the WAL into the database file itself (that
waited for two fsyncs, ~1.5 ms per memory write); the process's checkpointer thread does, shortly after."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from zengram.adapters.sqlite import database
from zengram.adapters.sqlite.database import SQLiteDatabase

SCHEMA = "CREATE TABLE IF NOT EXISTS blobs (id INTEGER PRIMARY KEY, body BLOB NOT NULL);"
PAGE = 4096
WAIT_SECONDS = 10.0  # a bound on a wait that ends at once when the code is right, not a timing assertion


class RecordingCheckpointer:
    """Stands in for the process's checkpointer: notes each request and copies nothing."""

    def __init__(self) -> None:
        self.requests = 0

    def request(self, _: SQLiteDatabase) -> None:
        self.requests += 1

    def forget(self, _: SQLiteDatabase) -> None:
        pass


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> RecordingCheckpointer:
    checkpointer = RecordingCheckpointer()
    monkeypatch.setattr(database, "_CHECKPOINTER", checkpointer)
    return checkpointer


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> database._Checkpointer:
    checkpointer = database._Checkpointer(delay=0.01)
    monkeypatch.setattr(database, "_CHECKPOINTER", checkpointer)
    return checkpointer


@pytest.fixture
def db(tmp_path: Path) -> Iterator[SQLiteDatabase]:
    opened = SQLiteDatabase(tmp_path / "blobs.sqlite3", SCHEMA)
    yield opened
    opened.close()


def write_pages(db: SQLiteDatabase, pages: int) -> None:
    """One transaction per page-sized row, as writes come."""
    for _ in range(pages):
        with db.transaction() as tx:
            tx.execute("INSERT INTO blobs (body) VALUES (?)", (b"x" * (PAGE - 200),))


def test_a_commit_asks_for_a_checkpoint_and_copies_nothing_itself(db: SQLiteDatabase,
                                                                   recording: RecordingCheckpointer) -> None:
    write_pages(db, 1_200)  # past SQLite's default autocheckpoint (1,000 pages), below the backstop

    busy, wal_frames, copied = db.connection().execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()

    assert recording.requests == 1_200
    assert busy == 0 and wal_frames >= 1_200  # no commit restarted the WAL: every page was still in it
    assert copied == wal_frames  # and the checkpoint copies them all when asked


def test_the_checkpointer_copies_the_wal_into_the_database_file(db: SQLiteDatabase,
                                                                quick: database._Checkpointer) -> None:
    before = db.path.stat().st_size
    checkpointed_on: list[str] = []
    checkpoint = db.checkpoint

    def noting_thread() -> None:
        checkpointed_on.append(threading.current_thread().name)
        checkpoint()

    db.checkpoint = noting_thread  # type: ignore[method-assign]

    write_pages(db, 50)

    deadline = time.monotonic() + WAIT_SECONDS
    while db.path.stat().st_size < before + 50 * PAGE and time.monotonic() < deadline:
        time.sleep(0.01)
    assert db.path.stat().st_size >= before + 50 * PAGE  # only a checkpoint writes pages to the database file
    assert checkpointed_on and set(checkpointed_on) == {"zengram-sqlite-checkpoint"}
    assert db.connection().execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == 50


def test_a_closed_database_is_not_reopened_by_a_late_checkpoint(db: SQLiteDatabase,
                                                                recording: RecordingCheckpointer) -> None:
    write_pages(db, 3)
    db.close()

    db.checkpoint()  # a round that was due when it closed

    assert db._connections == []
    assert db.connection().execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == 3  # still usable after


@pytest.mark.parametrize(("restart_pages", "passes"), [(10, 2), (database.RESTART_PAGES, 1)])
def test_a_long_wal_is_copied_whole_so_that_the_next_write_starts_it_again(
        db: SQLiteDatabase, recording: RecordingCheckpointer, monkeypatch: pytest.MonkeyPatch, restart_pages: int,
        passes: int) -> None:
    """A write starts the WAL again from its beginning only if it finds all of it copied. Writers that never pause
    for a checkpoint's length add pages while it copies; once the WAL is long, a second pass copies those too,
    holding the write lock, rather than leave the WAL growing to the backstop's size. A short WAL gets one pass:
    no writer waits for it."""
    monkeypatch.setattr(database, "RESTART_PAGES", restart_pages)
    write_pages(db, 30)
    connection = db.connection()
    other_writer = sqlite3.connect(db.path, isolation_level=None)

    class WriterBesideTheCheckpoint:
        """The checkpoint's connection, with another connection committing a write as its first pass ends."""

        passes = 0

        def execute(self, sql: str, *parameters: Any) -> sqlite3.Cursor:
            cursor = connection.execute(sql, *parameters)
            if "wal_checkpoint" in sql:
                self.passes += 1
                if self.passes == 1:
                    other_writer.execute("INSERT INTO blobs (body) VALUES (?)", (b"y" * (PAGE - 200),))
            return cursor

    beside = WriterBesideTheCheckpoint()
    with monkeypatch.context() as patched:
        patched.setattr(db, "connection", lambda: beside)
        db.checkpoint()

    write_pages(db, 1)
    _, wal_frames, _ = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    other_writer.close()
    assert beside.passes == passes
    assert wal_frames < 10  # the last write found the WAL copied whole, and started it again
