"""The embedded search index with its HNSW graph always on (`vector_ann_min_rows=0`): the `SearchIndex` contract
holds whether broad vector searches scan the matrix or re-score the graph's candidates."""

from __future__ import annotations

from tests.contract.embedded_modes import embedded_index_with

NAME = "sqlite-hnsw"
ADAPTERS = {"search_index": embedded_index_with(vector_ann_min_rows=0)}
