"""A SQLite file shared by many threads: one connection per thread, WAL, explicit transactions."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


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
            if self._on_connect is not None:
                self._on_connect(connection)
            self._local.connection = connection
            with self._registry_lock:
                self._connections.append(connection)
        return connection

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: takes the write lock up front so check-then-write is atomic."""
        connection = self.connection()
        with self._write_lock:
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")

    def close(self) -> None:
        with self._registry_lock:
            for connection in self._connections:
                connection.close()
            self._connections.clear()
        self._local = threading.local()
