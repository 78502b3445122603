"""The OpenSearch `SearchIndex` in the contract suite, against a real cluster when OPENSEARCH_URL is set.

Optional settings: OPENSEARCH_AUTH (none | basic | sigv4), OPENSEARCH_USERNAME / OPENSEARCH_PASSWORD,
OPENSEARCH_AWS_REGION and OPENSEARCH_AWS_SERVICE (es | aoss). Each test gets its own alias (and so its
own index), dropped afterwards. See infra/opensearch.md.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from zengram.ports import SearchIndex

SKIP_REASON = ("OPENSEARCH_URL not set: no OpenSearch server on this machine; request-level tests in "
               "tests/unit/test_opensearch_requests.py cover the adapter")


@contextmanager
def _opensearch_index(_: Path) -> Iterator[SearchIndex]:
    url = os.environ.get("OPENSEARCH_URL")
    if not url:
        pytest.skip(SKIP_REASON)
    from zengram.adapters.opensearch import OpenSearchIndex

    options: dict[str, Any] = {
        "auth": os.environ.get("OPENSEARCH_AUTH", "none"),
        "username": os.environ.get("OPENSEARCH_USERNAME"),
        "password": os.environ.get("OPENSEARCH_PASSWORD"),
        "aws_region": os.environ.get("OPENSEARCH_AWS_REGION"),
        "aws_service": os.environ.get("OPENSEARCH_AWS_SERVICE", "es"),
    }
    index = OpenSearchIndex(url, alias=f"zengram-contract-{uuid.uuid4().hex[:12]}", refresh="wait_for", **options)
    try:
        yield index
    finally:
        index.clear()
        index.close()


SEARCH_INDEXES = {"opensearch": _opensearch_index}
