"""Document knowledge base containers on each record backend: SQLite (the embedded host) and DynamoDB (moto, or
the emulator AWS_ENDPOINT_URL names). Chunk vectors and keywords stay in the embedded index on both."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from zengram.assembly.containers import build_documents_container
from zengram.documents.wiring import DocumentsContainer
from zengram.kernel.ports import Embedder
from zengram.settings import Settings

from tests.support import API_KEY, TickingClock

BACKENDS = ["sqlite", "dynamodb"]


def kb_settings(data_dir: Path, roots: list[Path], **overrides: object) -> Settings:
    return Settings(data_dir=data_dir, api_key=API_KEY, rate_limit_enabled=False,
                    documents_allowed_roots=[str(root) for root in roots], **overrides)  # type: ignore[arg-type]


@contextmanager
def documents_container(backend: str, tmp_path: Path, roots: list[Path], embedder: Embedder,
                        **overrides: object) -> Iterator[DocumentsContainer]:
    if backend == "sqlite":
        container = build_documents_container(kb_settings(tmp_path / "data", roots, **overrides), embedder=embedder,
                                              clock=TickingClock())
        try:
            yield container
        finally:
            container.close()
        return
    if not all(importlib.util.find_spec(name) for name in ("boto3", "moto")):
        pytest.skip("boto3 and moto[server] are needed: pip install -e '.[dev]'")
    from tests.aws_support import dynamodb_endpoint, unique_table_name

    with pytest.MonkeyPatch.context() as patch:
        for name, value in {"AWS_ENDPOINT_URL_DYNAMODB": dynamodb_endpoint(), "AWS_ACCESS_KEY_ID": "testing",
                            "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}.items():
            patch.setenv(name, value)
        table = unique_table_name()
        settings = kb_settings(tmp_path / "data", roots, record_store="dynamodb", dynamodb_create_table=True,
                               documents_dynamodb_table=table, aws_region="us-east-1", **overrides)
        container = build_documents_container(settings, embedder=embedder, clock=TickingClock())
        try:
            yield container
        finally:
            container.close()
            from tests.aws_support import dynamodb_client

            dynamodb_client().delete_table(TableName=table)
