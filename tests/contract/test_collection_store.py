"""The `CollectionStore` contract (see zengram.memory.ports.CollectionStore), on SQLite and on DynamoDB (moto
server)."""

from __future__ import annotations

from datetime import UTC, datetime

from zengram.memory.domain.collections import Collection
from zengram.memory.ports import CollectionStore

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def collection(name: str, description: str | None = None) -> Collection:
    return Collection(name=name, description=description, dimensions=384, created_at=T0)


def test_create_get_list_delete(collection_store: CollectionStore) -> None:
    assert collection_store.create(collection("research", "papers and notes")) is True
    assert collection_store.create(collection("archive")) is True

    assert collection_store.get("research") == collection("research", "papers and notes")
    assert collection_store.get("archive") == collection("archive")
    assert collection_store.get("nope") is None
    assert [c.name for c in collection_store.list_all()] == ["archive", "research"]

    assert collection_store.delete("archive") is True
    assert collection_store.delete("archive") is False
    assert [c.name for c in collection_store.list_all()] == ["research"]


def test_a_name_is_registered_once(collection_store: CollectionStore) -> None:
    assert collection_store.create(collection("research", "first")) is True
    assert collection_store.create(collection("research", "second")) is False
    stored = collection_store.get("research")
    assert stored is not None and stored.description == "first"
