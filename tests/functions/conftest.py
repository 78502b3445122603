"""Function tests run each handler as Lambda would: its sample event, DynamoDB on moto (or the emulator
AWS_ENDPOINT_URL names), the embedded search index in a temp folder, the real offline embedder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from zengram.assembly.containers import build_container
from zengram.assembly.provider import ContainerProvider
from zengram.settings import Settings

from tests.aws_support import REGION, dynamodb_endpoint, fresh_dynamodb_store
from tests.functions.invoke import load_function_module

SAMPLE_KEY = "sample-api-key"  # the key the sample events carry


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the built MiniLM graph, so it is built once per test process, not once per test."""
    return tmp_path_factory.mktemp("minilm-graphs")


@pytest.fixture
def lambda_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, model_cache: Path) -> Iterator[str]:
    """The environment template.yaml gives the functions, pointed at local stand-ins; yields the table name."""
    with fresh_dynamodb_store() as store:
        variables = {
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_METRICS_NAMESPACE": "ZengramTest",
            "BRAIN_API_KEY": SAMPLE_KEY,
            "ZENGRAM_RECORD_STORE": "dynamodb",
            "ZENGRAM_DYNAMODB_TABLE": store.table_name,
            "ZENGRAM_SEARCH_INDEX": "embedded",
            "ZENGRAM_RATE_LIMIT_ENABLED": "false",  # the rate-limit tests turn it on
            "ZENGRAM_DATA_DIR": str(tmp_path / "lambda-tmp"),
            "ZENGRAM_MINILM_CACHE_DIR": str(model_cache),
            "AWS_ENDPOINT_URL_DYNAMODB": dynamodb_endpoint(),
            "AWS_REGION": REGION,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
        }
        for name, value in variables.items():
            monkeypatch.setenv(name, value)
        yield store.table_name


def fresh_container_for(group: str) -> ContainerProvider:
    """A new execution environment: the function's app forgets any container built by an earlier test."""
    app = load_function_module(group).app
    provider = ContainerProvider(lambda: build_container(Settings()))
    app.state.provider = provider
    return provider
