"""The embedded backend in the contract suites: the SQLite record backend, built whole as the embedded host builds it
(`zengram.assembly.containers.build_sqlite_backend`: one records file, the entity registry's own file), and the
embedded search
index."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from zengram.adapters.factories import build_embedded_index
from zengram.kernel.ports import Clock
from zengram.memory.wiring import RecordBackend, build_sqlite_backend
from zengram.settings import Settings

from tests.support import API_KEY

NAME = "sqlite"


def _settings(folder: Path) -> Settings:
    return Settings(data_dir=folder / "data", api_key=API_KEY, record_store="sqlite", search_index="embedded")


@contextmanager
def _backend(folder: Path, clock: Clock) -> Iterator[RecordBackend]:
    backend = build_sqlite_backend(_settings(folder), clock)
    try:
        yield backend
    finally:
        backend.close()


def _store(attribute: str) -> Any:
    @contextmanager
    def factory(folder: Path, clock: Clock) -> Iterator[Any]:
        with _backend(folder, clock) as backend:
            yield getattr(backend, attribute)

    return factory


@contextmanager
def _search_index(folder: Path, _clock: Clock) -> Iterator[Any]:
    index = build_embedded_index(_settings(folder))
    try:
        yield index
    finally:
        index.close()


ADAPTERS = {
    "record_store": _store("records"),
    "client_store": _store("clients"),
    "collection_store": _store("collections"),
    "api_key_store": _store("keys"),
    "rate_limiter": _store("rate_limiter"),
    "job_store": _store("jobs"),
    "entity_store": _store("entities"),
    "search_index": _search_index,
}
