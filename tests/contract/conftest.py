"""Each port's contract suite runs against every adapter of that port listed here."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from zengram.adapters.sqlite import EmbeddedSearchIndex, SQLiteRecordStore
from zengram.ports import RecordStore, SearchIndex

RecordStoreFactory = Callable[[Path], RecordStore]
SearchIndexFactory = Callable[[Path], SearchIndex]

RECORD_STORES: dict[str, RecordStoreFactory] = {
    "sqlite": lambda folder: SQLiteRecordStore(folder / "records.sqlite3"),
}
SEARCH_INDEXES: dict[str, SearchIndexFactory] = {
    "embedded": lambda folder: EmbeddedSearchIndex(folder / "index.sqlite3"),
}


@pytest.fixture(params=sorted(RECORD_STORES))
def record_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RecordStore]:
    store = RECORD_STORES[request.param](tmp_path)
    yield store
    close = getattr(store, "close", None)
    if close:
        close()


@pytest.fixture(params=sorted(SEARCH_INDEXES))
def search_index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SearchIndex]:
    index = SEARCH_INDEXES[request.param](tmp_path)
    yield index
    close = getattr(index, "close", None)
    if close:
        close()
