"""A SQLite file shared by many threads: one connection per thread, WAL, explicit transactions, and the WAL copied
into the database file beside the writers rather than by them."""

from __future__ import annotations

import errno
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from zengram.kernel.errors import StorageFull

logger = logging.getLogger(__name__)

# How long the checkpointer lets commits gather before it copies them into the database file (one fsync pair for
# all of them). It bounds the WAL to what the process writes in this time.
CHECKPOINT_DELAY_SECONDS = 0.25
# A WAL this long is copied whole, writers paused for the last few pages: SQLite's default checkpoint size.
RESTART_PAGES = 1_000
# SQLite's own checkpoint on commit, left as a backstop (for a write made outside `transaction`, or a checkpointer
# that fell behind), far above the checkpointer's WAL sizes: 10,000 pages, ~40 MB.
BACKSTOP_CHECKPOINT_PAGES = 10_000


def _no_room(error: BaseException) -> bool:
    """SQLITE_FULL ("database or disk is full") or ENOSPC from the file system."""
    if isinstance(error, sqlite3.OperationalError):
        return getattr(error, "sqlite_errorname", "") == "SQLITE_FULL" or "disk is full" in str(error)
    return isinstance(error, OSError) and error.errno == errno.ENOSPC


class SQLiteDatabase:
    """Hands each thread its own connection; writers serialise through `BEGIN IMMEDIATE`."""

    def __init__(self, path: Path, schema: str, on_connect: Callable[[sqlite3.Connection], None] | None = None) -> None:
        self._path = path
        self._on_connect = on_connect
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._registry_lock = threading.Lock()
        # Writers in this process queue here instead of in SQLite's busy handler, which sleeps in
        # growing steps and turns contention into long stalls.
        self._write_lock = threading.Lock()
        self._checkpoint_lock = threading.Lock()  # a checkpoint and `close` never overlap
        self._closed = False
        self.full: str | None = None  # why the last write found no room (a full disk), until one succeeds
        path.parent.mkdir(parents=True, exist_ok=True)
        self.connection().executescript(schema)

    @property
    def path(self) -> Path:
        return self._path

    def connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False, timeout=60)
            connection.row_factory = sqlite3.Row
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute("PRAGMA busy_timeout=60000")
            # A commit that checkpoints waits for two fsyncs (~1.5 ms per write on the development machine, #18):
            # the checkpointer does it beside the writers instead.
            connection.execute(f"PRAGMA wal_autocheckpoint={BACKSTOP_CHECKPOINT_PAGES}")
            if self._on_connect is not None:
                self._on_connect(connection)
            self._local.connection = connection
            with self._registry_lock:
                self._connections.append(connection)
                self._closed = False
        return connection

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: takes the write lock up front so check-then-write is atomic."""
        connection = self.connection()
        with self._write_lock:
            try:
                connection.execute("BEGIN IMMEDIATE")
                try:
                    yield connection
                except BaseException:
                    connection.execute("ROLLBACK")
                    raise
                try:
                    connection.execute("COMMIT")
                except sqlite3.Error:
                    if connection.in_transaction:  # a COMMIT that failed (a full disk) leaves it open
                        connection.execute("ROLLBACK")
                    raise
            except (sqlite3.OperationalError, OSError) as error:
                if not _no_room(error):
                    raise
                self.full = f"{self._path.name}: {error}"
                raise StorageFull(f"the record store has no room left for this write ({error}); nothing was "
                                  "written — free disk space and retry") from error
        self.full = None
        _CHECKPOINTER.request(self)

    def checkpoint(self) -> None:
        """Copies the WAL's committed pages into the database file (PASSIVE: readers are neither waited for nor
        blocked), beside the writers. The WAL starts again from its beginning only at a write that finds all of it
        copied, which writes that never pause for a checkpoint's length never do: once it holds `RESTART_PAGES`, a
        second pass holding this process's write lock copies the few pages added meanwhile, so the WAL stays about
        the size SQLite's own checkpoints kept it at."""
        with self._checkpoint_lock:
            if self._closed:
                return
            try:
                connection = self.connection()
                _, wal_pages, _ = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                if wal_pages >= RESTART_PAGES:
                    with self._write_lock:
                        connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            except sqlite3.Error as error:  # the backstop and the next request still copy it
                logger.warning("WAL checkpoint of %s failed: %s", self._path.name, error)

    def close(self) -> None:
        with self._checkpoint_lock:
            self._closed = True
            _CHECKPOINTER.forget(self)
            with self._registry_lock:
                for connection in self._connections:
                    connection.close()
                self._connections.clear()
            self._local = threading.local()


class _Checkpointer:
    """One daemon thread for the process, checkpointing the databases that had commits, each at most once per
    `delay`: the WAL's fsyncs happen there, and no commit waits for them. The thread starts on the first request
    (again after a fork)."""

    def __init__(self, delay: float) -> None:
        self._delay = delay
        self._due: set[SQLiteDatabase] = set()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._pause = threading.Event()  # never set: a sleep that a test patching time.sleep leaves alone
        self._thread: threading.Thread | None = None

    def request(self, database: SQLiteDatabase) -> None:
        if database in self._due:  # the common case, no lock: already due in the coming round
            return
        with self._lock:
            self._due.add(database)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="zengram-sqlite-checkpoint", daemon=True)
                self._thread.start()
        self._wake.set()

    def forget(self, database: SQLiteDatabase) -> None:
        with self._lock:
            self._due.discard(database)

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._pause.wait(self._delay)  # let commits gather: one checkpoint copies them all
            with self._lock:
                self._wake.clear()
                due, self._due = self._due, set()
            for database in due:
                database.checkpoint()


_CHECKPOINTER = _Checkpointer(CHECKPOINT_DELAY_SECONDS)
