"""Fixtures for tests against a real OpenSearch: the session's test node (tests/opensearch_node.py) or the
cluster named by OPENSEARCH_URL. Every test works under an alias of its own and drops its indexes afterwards."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from zengram.adapters.opensearch import ClientOptions, OpenSearchIndex, RetryPolicy

from tests.opensearch_node import opensearch_url


@pytest.fixture(scope="session")
def url() -> str:
    return opensearch_url()


@pytest.fixture(scope="session")
def engine(url: str) -> Iterator[Any]:
    """opensearch-py pointed at the engine, for looking behind the adapter's back (and breaking things)."""
    from opensearchpy import OpenSearch

    client = OpenSearch(hosts=[url], timeout=30)
    yield client
    client.close()


@pytest.fixture
def alias(engine: Any) -> Iterator[str]:
    name = f"zengram-engine-{uuid.uuid4().hex[:10]}"
    yield name
    engine.indices.delete(index=f"{name}*", ignore_unavailable=True)


@pytest.fixture
def make_index(url: str, alias: str) -> Iterator[Any]:
    """Builds adapters on the test's alias (read-after-write, no retry pauses); closes them afterwards."""
    built: list[OpenSearchIndex] = []

    def make(**options: Any) -> OpenSearchIndex:
        index = OpenSearchIndex(ClientOptions(url), **{"alias": alias, "refresh": True,
                                                       "retry": RetryPolicy(base_delay=0.0), **options})
        built.append(index)
        return index

    yield make
    for index in built:
        index.close()
