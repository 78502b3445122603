"""The embedded search index with in-memory keyword postings always on (`keyword_memory_min_rows=0`): the
`SearchIndex` contract holds whether keyword searches ask FTS5 or score the postings derived from it."""

from __future__ import annotations

from tests.contract.embedded_modes import embedded_index_with

NAME = "sqlite-memory-keywords"
ADAPTERS = {"search_index": embedded_index_with(keyword_memory_min_rows=0)}
