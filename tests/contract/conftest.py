"""Each port's contract suite runs against every adapter of it, registered in one way: a module
`tests/contract/backend_<name>.py` per backend, exporting `NAME` and `ADAPTERS`, a dict from a port's fixture name
(see `PORTS`) to a factory `(folder, clock) -> context manager yielding the adapter`. A factory may skip
(pytest.skip) with a visible reason when its service is not available.

Each port below is a fixture, parametrized over the backends that provide it: `record_store` runs on "sqlite" and
"dynamodb", `search_index` on "sqlite" (the embedded index) and "opensearch", and so on. The record store's adapter
also serves the record backend's other ports (IndexOutbox, RecordCounters, ConsolidationWrites): their suites take
`record_store`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from zengram.kernel.ports import Clock

import tests.contract as contract_package

Factory = Callable[[Path, Clock], AbstractContextManager[Any]]
PORTS = ("record_store", "search_index", "client_store", "collection_store", "api_key_store", "rate_limiter",
         "job_store", "entity_store")


def _backend_modules() -> list[ModuleType]:
    return [importlib.import_module(f"tests.contract.{module.name}")
            for module in pkgutil.iter_modules(contract_package.__path__) if module.name.startswith("backend_")]


BACKENDS: dict[str, dict[str, Factory]] = {module.NAME: module.ADAPTERS for module in _backend_modules()}
assert all(set(adapters) <= set(PORTS) for adapters in BACKENDS.values()), "a backend names an unknown port"


def _port(name: str) -> Any:
    """The fixture of port `name`: one instance per backend that provides it, on a fresh folder (or table)."""

    @pytest.fixture(name=name, params=sorted(backend for backend, adapters in BACKENDS.items() if name in adapters))
    def adapter(request: pytest.FixtureRequest, tmp_path: Path, clock: Clock) -> Iterator[Any]:
        with BACKENDS[request.param][name](tmp_path, clock) as built:
            yield built

    return adapter


record_store = _port("record_store")
search_index = _port("search_index")
client_store = _port("client_store")
collection_store = _port("collection_store")
api_key_store = _port("api_key_store")
rate_limiter = _port("rate_limiter")
job_store = _port("job_store")
entity_store = _port("entity_store")
