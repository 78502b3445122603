"""Embedded host: SQLite records (WAL), FTS5 keywords and an exact in-process vector index."""

from zengram.adapters.sqlite.records import SQLiteRecordStore
from zengram.adapters.sqlite.search_index import EmbeddedSearchIndex

__all__ = ["EmbeddedSearchIndex", "SQLiteRecordStore"]
