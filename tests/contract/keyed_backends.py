"""Factories for the small ports that live in the record store's backend (ClientStore, RateLimiter, ApiKeyStore):
each runs on SQLite (a records file of its own) and on DynamoDB (a fresh table, moto or AWS_ENDPOINT_URL)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from zengram.ports import Clock

BACKENDS = ["dynamodb", "sqlite"]


@contextmanager
def dynamodb_table() -> Iterator[tuple[str, Any]]:
    """(table name, boto3 client) of a fresh records table."""
    if not all(importlib.util.find_spec(name) for name in ("boto3", "moto")):
        pytest.skip("boto3 and moto[server] are needed: pip install -e '.[dev]'")
    from tests.aws_support import fresh_dynamodb_store

    with fresh_dynamodb_store() as store:
        yield store.table_name, store.client


@contextmanager
def client_store(backend: str, folder: Path) -> Iterator[Any]:
    if backend == "sqlite":
        from zengram.adapters.sqlite.clients import SQLiteClientStore

        store = SQLiteClientStore(folder / "records.sqlite3")
        yield store
        store.close()
        return
    from zengram.adapters.dynamodb.clients import DynamoDBClientStore

    with dynamodb_table() as (name, client):
        yield DynamoDBClientStore(name, client=client)


@contextmanager
def rate_limiter(backend: str, folder: Path, clock: Clock) -> Iterator[Any]:
    if backend == "sqlite":
        from zengram.adapters.sqlite.rate_limits import SQLiteRateLimiter

        limiter = SQLiteRateLimiter(folder / "records.sqlite3", clock)
        yield limiter
        limiter.close()
        return
    from zengram.adapters.dynamodb.rate_limits import DynamoDBRateLimiter

    with dynamodb_table() as (name, client):
        yield DynamoDBRateLimiter(name, clock, client=client)



@contextmanager
def api_key_store(backend: str, folder: Path) -> Iterator[Any]:
    if backend == "sqlite":
        from zengram.adapters.sqlite.keys import SQLiteApiKeyStore

        store = SQLiteApiKeyStore(folder / "records.sqlite3")
        yield store
        store.close()
        return
    from zengram.adapters.dynamodb.keys import DynamoDBApiKeyStore

    with dynamodb_table() as (name, client):
        yield DynamoDBApiKeyStore(name, client=client)
