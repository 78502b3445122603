"""The OpenSearch `SearchIndex` in the contract suite, against a real engine: the session's test node
(tests/opensearch_node.py), or the cluster named by OPENSEARCH_URL.

Optional settings for a cluster of one's own: OPENSEARCH_AUTH (none | basic | sigv4), OPENSEARCH_USERNAME /
OPENSEARCH_PASSWORD, OPENSEARCH_AWS_REGION and OPENSEARCH_AWS_SERVICE (es | aoss). Each test gets its own
alias (and so its own index), dropped afterwards. See infra/opensearch.md.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from zengram.kernel.ports import Clock, SearchIndex

from tests.opensearch_node import opensearch_url


@contextmanager
def _opensearch_index(_folder: Path, _clock: Clock) -> Iterator[SearchIndex]:
    url = opensearch_url()
    from zengram.adapters.opensearch import ClientOptions, OpenSearchIndex

    options: dict[str, Any] = {
        "auth": os.environ.get("OPENSEARCH_AUTH", "none"),
        "username": os.environ.get("OPENSEARCH_USERNAME"),
        "password": os.environ.get("OPENSEARCH_PASSWORD"),
        "aws_region": os.environ.get("OPENSEARCH_AWS_REGION"),
        "aws_service": os.environ.get("OPENSEARCH_AWS_SERVICE", "es"),
    }
    index = OpenSearchIndex(ClientOptions(url, **options), alias=f"zengram-contract-{uuid.uuid4().hex[:12]}",
                            refresh=True)
    try:
        yield index
    finally:
        index.clear()
        index.close()


NAME = "opensearch"
ADAPTERS = {"search_index": _opensearch_index}
