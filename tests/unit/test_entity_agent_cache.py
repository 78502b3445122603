"""The registered agents a write's extraction matches are read once and kept (#18): every write links its own agent,
which used to drop the list and read it again at the next write; now only an agent the list lacks, or a change to
the registry (reclassify, delete, merge), does."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from zengram.adapters.sqlite.entities import SQLiteEntityStore
from zengram.kernel.content import content_hash
from zengram.memory.domain.entities import EntityRecord, EntityType
from zengram.memory.domain.models import Importance, Memory, MemoryType
from zengram.memory.services.entity_links import EntityLinker

T0 = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


class CountingEntityStore(SQLiteEntityStore):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.listings = 0

    def list_entities(self, type_: EntityType | None, limit: int, offset: int) -> list[EntityRecord]:
        self.listings += 1
        return super().list_entities(type_, limit, offset)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[CountingEntityStore]:
    counting = CountingEntityStore(tmp_path / "entities.sqlite3")
    yield counting
    counting.close()


@pytest.fixture
def linker(store: CountingEntityStore) -> EntityLinker:
    return EntityLinker(store, cache_seconds=3600)


def write(linker: EntityLinker, content: str, agent: str) -> Memory:
    """What a memory write does with entities: extract, then link the stored memory."""
    entities = linker.extract(content, agent, "acme")
    memory = Memory(id=str(uuid.uuid4()), type=MemoryType.EVENT, content=content, content_hash=content_hash(content),
                    source_agent=agent, client_id="acme", importance=Importance.LOW, created_at=T0, updated_at=T0,
                    observed_by=[agent], entities=entities)
    linker.link(memory)
    return memory


def test_a_known_agents_writes_read_the_agent_list_once(linker: EntityLinker, store: CountingEntityStore) -> None:
    write(linker, "deploy-bot restarted the workers", "deploy-bot")  # a new agent: the list changes
    listings = store.listings

    for n in range(5):
        write(linker, f"deploy-bot rotated log file {n}", "deploy-bot")

    assert store.listings == listings + 1  # read again once, after the new agent; then kept


def test_a_new_agent_is_matched_in_the_next_write(linker: EntityLinker, store: CountingEntityStore) -> None:
    write(linker, "The nightly export ran", "deploy-bot")
    write(linker, "Backups verified", "backup-bot")  # a second agent registers

    mention = write(linker, "Asked backup-bot to retry the export", "deploy-bot")

    assert ("backup-bot", EntityType.AGENT) in [(ref.name, ref.type) for ref in mention.entities]


def test_a_registry_change_makes_the_next_write_read_the_agents_again(linker: EntityLinker,
                                                                     store: CountingEntityStore) -> None:
    write(linker, "The nightly export ran", "deploy-bot")
    write(linker, "The nightly export ran again", "deploy-bot")
    listings = store.listings

    linker.registry_changed()
    write(linker, "The nightly export ran once more", "deploy-bot")

    assert store.listings == listings + 1
