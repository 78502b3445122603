"""The embedded index keeps each document's scope across restarts, and an index file written before scopes existed
opens with every document in the scope of Zengram memories (the only kind it could hold)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from zengram.adapters.sqlite import EmbeddedSearchIndex
from zengram.kernel.search import IndexAttributes, IndexDocument, SearchFilters

from tests.support import HashingEmbedder

EMBEDDER = HashingEmbedder(dimension=16)
T0 = datetime(2026, 3, 1, tzinfo=UTC)


def document(doc_id: str, text: str, scope: str = "") -> IndexDocument:
    attributes = IndexAttributes(type="event", source_agent="agent", client_id="acme", category="episodic",
                                 valid_from=T0, created_at=T0, scope=scope)
    return IndexDocument(doc_id, text, EMBEDDER.embed([text])[0], attributes)


def test_scopes_survive_a_restart(tmp_path: Path) -> None:
    index = EmbeddedSearchIndex(tmp_path / "index.sqlite3")
    index.bind_model(EMBEDDER.model_id, EMBEDDER.dimension)
    index.upsert([document("memory", "release train"), document("note", "release train", scope="chat:alice")])
    index.close()

    reopened = EmbeddedSearchIndex(tmp_path / "index.sqlite3")
    vector = EMBEDDER.embed(["release train"])[0]
    assert [hit.id for hit in reopened.vector_search(vector, SearchFilters(), 5)] == ["memory"]
    assert [hit.id for hit in reopened.vector_search(vector, SearchFilters(scopes=("chat:alice",)), 5)] == ["note"]
    assert [hit.id for hit in reopened.keyword_search("release", SearchFilters(scopes=("chat:alice",)), 5)] == ["note"]
    reopened.close()


def test_an_index_file_from_before_scopes_holds_zengram_memories(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    index = EmbeddedSearchIndex(path)
    index.bind_model(EMBEDDER.model_id, EMBEDDER.dimension)
    index.upsert([document("old", "quarterly budget review")])
    index.close()
    with sqlite3.connect(path) as connection:  # the file as an earlier version wrote it
        connection.execute("ALTER TABLE docs DROP COLUMN scope")

    upgraded = EmbeddedSearchIndex(path)
    vector = EMBEDDER.embed(["budget"])[0]
    assert [hit.id for hit in upgraded.vector_search(vector, SearchFilters(), 5)] == ["old"]
    assert [hit.id for hit in upgraded.keyword_search("budget", SearchFilters(), 5)] == ["old"]
    assert upgraded.keyword_search("budget", SearchFilters(scopes=("chat:alice",)), 5) == []
    upgraded.close()
