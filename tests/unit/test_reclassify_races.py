"""Reclassification against a concurrent PATCH: its rewrite of a memory's `entities` is conditioned on the revision
it read, so a PATCH landing between that read and the write is never overwritten (docs/api/entities.md)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from zengram.assembly.containers import Container, build_container
from zengram.memory.domain.entities import EntityType, ReclassifyRequest
from zengram.memory.domain.models import Memory, MemoryType
from zengram.memory.domain.requests import MemoryDraft, MemoryPatch
from zengram.settings import Settings

from tests.support import HashingEmbedder, TickingClock


@pytest.fixture
def brain(settings: Settings, clock: TickingClock) -> Iterator[Container]:
    built = build_container(settings, embedder=HashingEmbedder(), clock=clock)
    yield built
    built.close()


def test_a_patch_landing_while_reclassify_rewrites_a_memory_is_kept(
    brain: Container, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a memory naming PostgreSQL
    memory = brain.memory.store(MemoryDraft(type=MemoryType.FACT, content="We run PostgreSQL on our own hosts",
                                            source_agent="claude-code", client_id="acme")).memory
    read_chunk = brain.records.get_many
    patched: list[Memory] = []

    def get_many_then_patch(memory_ids: Sequence[str]) -> dict[str, Memory]:
        found = read_chunk(memory_ids)
        if not patched:  # right after reclassify read its chunk, someone PATCHes the content (new entities)
            patched.append(brain.memory.update(memory.id, MemoryPatch(
                content="We run PostgreSQL and Redis on our own hosts")).memory)
        return found

    monkeypatch.setattr(brain.records, "get_many", get_many_then_patch)

    # When PostgreSQL is reclassified as a system
    report = brain.entities.reclassify(ReclassifyRequest.model_validate(
        {"reclassifications": [{"name": "PostgreSQL", "new_type": "system"}], "dry_run": False}))

    # Then the PATCH's content and entities stay (PostgreSQL already took the new type from the registry)
    assert patched and [change.name for change in report.changes] == ["PostgreSQL"]
    after = brain.memory.get(memory.id)
    assert after.content == "We run PostgreSQL and Redis on our own hosts"
    assert {(ref.name, ref.type) for ref in after.entities} == {
        ("PostgreSQL", EntityType.SYSTEM), ("Redis", EntityType.TECHNOLOGY),
        ("acme", EntityType.CLIENT), ("claude-code", EntityType.AGENT)}  # and the writers, as upstream
    assert after.revision == patched[0].revision  # nothing was left to rewrite
