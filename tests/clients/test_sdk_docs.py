"""`docs_query` on the synchronous SDK client, against a running server whose document base holds the sample."""

from __future__ import annotations

import pytest
from zengram.client import BrainClient, BrainError
from zengram.embedded.background import BackgroundServer

from tests.clients.test_mcp import index_sample_documents


def test_docs_query_before_and_after_indexing(live_server: BackgroundServer, brain: BrainClient) -> None:
    with pytest.raises(BrainError, match="Index not ready"):
        brain.docs_query("invoice")
    index_sample_documents(live_server)
    answer = brain.docs_query("what calls compute_total", mode="graph", top_k=2, include_relationships=True)
    assert {result.metadata["symbol"] for result in answer.results} == {"Invoice", "MonthlyReport"}
    assert answer.total_results == 2 and all(result.relationships for result in answer.results)
    hybrid = brain.docs_query("paid vacation days", mode="bm25", top_k=1)
    assert hybrid.results[0].source.endswith("handbook.pdf") and hybrid.results[0].metadata["page"] == 1
