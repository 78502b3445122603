"""The AWS record backend in the contract suites: every store of `zengram.assembly.containers.build_dynamodb_backend`
on a fresh
table of a moto server, or of the emulator AWS_ENDPOINT_URL names (LocalStack...)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from zengram.kernel.ports import Clock
from zengram.memory.wiring import build_dynamodb_backend
from zengram.settings import Settings

from tests.support import API_KEY

NAME = "dynamodb"


def _store(attribute: str) -> Any:
    @contextmanager
    def factory(folder: Path, clock: Clock) -> Iterator[Any]:
        if not all(importlib.util.find_spec(name) for name in ("boto3", "moto")):
            pytest.skip("boto3 and moto[server] are needed: pip install -e '.[dev]'")
        from tests.aws_support import fresh_dynamodb_store

        with fresh_dynamodb_store() as table:  # drops the table and closes the client afterwards
            settings = Settings(data_dir=folder / "data", api_key=API_KEY, record_store="dynamodb",
                                dynamodb_table=table.table_name)
            yield getattr(build_dynamodb_backend(settings, clock, client=table.client), attribute)

    return factory


ADAPTERS = {
    "record_store": _store("records"),
    "client_store": _store("clients"),
    "collection_store": _store("collections"),
    "api_key_store": _store("keys"),
    "rate_limiter": _store("rate_limiter"),
    "job_store": _store("jobs"),
    "entity_store": _store("entities"),
}
