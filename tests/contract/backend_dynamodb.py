"""The RecordStore contract against DynamoDB: a moto server, or the emulator AWS_ENDPOINT_URL names (LocalStack...)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest


@contextmanager
def _dynamodb_store(_folder: Path) -> Iterator[Any]:
    if not all(importlib.util.find_spec(name) for name in ("boto3", "moto")):
        pytest.skip("boto3 and moto[server] are needed: pip install -e '.[dev]'")
    from tests.aws_support import fresh_dynamodb_store

    with fresh_dynamodb_store() as store:
        yield store


RECORD_STORES = {"dynamodb": _dynamodb_store}
