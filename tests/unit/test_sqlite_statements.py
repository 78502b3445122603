"""The write path's hot statements are prepared once per connection, not at every execution (#38).

SQLite prepares a statement again whenever a bound value might change its plan; on `memories`, whose partial
indexes the planner weighs against the bound values, a probe left to the planner was prepared anew at each write
(~45 µs, twice a write). The authorizer runs only while SQLite compiles a statement, so it counts the preparations.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from zengram.adapters.sqlite.records import SQLiteRecordStore


def test_the_duplicate_probe_is_not_prepared_again_for_new_values(tmp_path: Path) -> None:
    store = SQLiteRecordStore(tmp_path / "records.sqlite3")
    try:
        connection = store._db.connection()
        compiled: list[int] = []

        def authorizer(action: int, *_: object) -> int:
            compiled.append(action)
            return sqlite3.SQLITE_OK

        connection.set_authorizer(authorizer)
        assert store.find_active_duplicate("client-a", "event", "a" * 64) is None
        assert compiled, "the first probe is compiled (the authorizer sees it)"
        compiled.clear()
        assert store.find_active_duplicate("client-b", "fact", "b" * 64) is None
        assert compiled == []
    finally:
        store.close()
