"""Each port's contract suite runs against every adapter registered here.

A backend module `tests/contract/backend_<name>.py` may export `RECORD_STORES` and/or `SEARCH_INDEXES`:
dicts from a short name to a factory `(tmp_path) -> context manager yielding the adapter`. The factory may
skip (pytest.skip) with a visible reason when its service is not available.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from zengram.adapters.sqlite import EmbeddedSearchIndex, SQLiteRecordStore
from zengram.ports import RecordStore, SearchIndex

import tests.contract as contract_package

Factory = Callable[[Path], AbstractContextManager[Any]]


@contextmanager
def _sqlite_store(folder: Path) -> Iterator[RecordStore]:
    store = SQLiteRecordStore(folder / "records.sqlite3")
    yield store
    store.close()


@contextmanager
def _embedded_index(folder: Path) -> Iterator[SearchIndex]:
    index = EmbeddedSearchIndex(folder / "index.sqlite3")
    yield index
    index.close()


def _collect(attribute: str, builtin: dict[str, Factory]) -> dict[str, Factory]:
    found = dict(builtin)
    for module in pkgutil.iter_modules(contract_package.__path__):
        if module.name.startswith("backend_"):
            found.update(getattr(importlib.import_module(f"tests.contract.{module.name}"), attribute, {}))
    return found


RECORD_STORES = _collect("RECORD_STORES", {"sqlite": _sqlite_store})
SEARCH_INDEXES = _collect("SEARCH_INDEXES", {"embedded": _embedded_index})


@pytest.fixture(params=sorted(RECORD_STORES))
def record_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RecordStore]:
    with RECORD_STORES[request.param](tmp_path) as store:
        yield store


@pytest.fixture(params=sorted(SEARCH_INDEXES))
def search_index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SearchIndex]:
    with SEARCH_INDEXES[request.param](tmp_path) as index:
        yield index
