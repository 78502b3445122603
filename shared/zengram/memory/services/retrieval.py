"""Upstream Zengram's optional retrieval stages as one search is configured with them
(docs/retrieval-extras.md): the query-time extras, the graph path, the rerank hook."""

from __future__ import annotations

from dataclasses import dataclass

from zengram.memory.domain.query_plan import QueryExtras
from zengram.memory.services.graph import GraphPath
from zengram.memory.services.rerank import RerankStage


@dataclass(frozen=True)
class RetrievalExtras:
    query: QueryExtras
    graph: GraphPath | None = None  # None: no graph path
    rerank: RerankStage | None = None  # None: no re-ranker configured

    def close(self) -> None:
        if self.rerank is not None:
            self.rerank.close()
