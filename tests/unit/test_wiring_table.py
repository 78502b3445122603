"""The wiring table answers every value the settings accept, for the memories and the documents alike."""

from __future__ import annotations

from typing import get_args

from zengram.adapters import factories
from zengram.documents import wiring as documents
from zengram.memory import wiring as memory
from zengram.settings import Settings


def allowed(field: str) -> set[str]:
    return set(get_args(Settings.model_fields[field].annotation))


def test_each_record_store_value_builds_memories_and_documents_records() -> None:
    assert set(memory.RECORD_BACKENDS) == set(documents.DOCUMENT_STORES) == allowed("record_store")


def test_each_search_index_value_builds_a_memories_and_a_documents_index() -> None:
    assert set(factories.SEARCH_INDEXES) == set(documents.CHUNK_INDEXES) == allowed("search_index")


def test_the_embedded_family_builds_documents_stores_that_close(tmp_path: object) -> None:
    settings = Settings(data_dir=tmp_path, api_key="k" * 32)  # type: ignore[arg-type]
    stores = documents.DOCUMENT_STORES["sqlite"](settings)
    index = documents.CHUNK_INDEXES["embedded"](settings)
    try:
        assert stores.graph_store_type == "sqlite" and index.count() == 0
    finally:
        index.close()
        stores.close()
    assert settings.documents_path.exists() and settings.documents_index_path.exists()
