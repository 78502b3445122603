"""A write's embedding runs beside the work that needs no vector (#18): the record is stored while the vector is
computed, the result is the one a write in sequence gives, and an import's vectors computed ahead are the ones
indexing would compute."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt
import pytest
from zengram.assembly.containers import Container, build_container
from zengram.kernel.search import IndexDocument
from zengram.memory.domain.models import MemoryType, WriteKind
from zengram.memory.domain.requests import ImportRecord, MemoryDraft, SearchRequest
from zengram.memory.services.index_guard import GuardedIndex
from zengram.settings import Settings

from tests.support import HashingEmbedder, TickingClock

WAIT_SECONDS = 10.0  # a bound on a wait that ends at once when the code is right, not a timing assertion


class StoreWatchingEmbedder(HashingEmbedder):
    """Before embedding a stored text, waits (boundedly) for the record store to hold more memories than
    `baseline` (counted by the test before its write), and notes whether it did: only a record written beside
    the embedding, or before it, can be there."""

    def __init__(self, wait_seconds: float = WAIT_SECONDS) -> None:
        super().__init__()
        self.wait_seconds = wait_seconds
        self.container: Container | None = None
        self.baseline = 0
        self.saw_record_first: list[bool] = []
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.texts += texts
        if self.container is not None and texts and texts[0].startswith("Watched"):
            records = self.container.backend.records
            before = self.baseline
            arrived = threading.Event()
            for _ in range(int(self.wait_seconds / 0.01)):
                if records.count() > before:
                    arrived.set()
                    break
                arrived.wait(0.01)
            self.saw_record_first.append(arrived.is_set())
        return super().embed(texts)


@pytest.fixture
def watching() -> StoreWatchingEmbedder:
    return StoreWatchingEmbedder()


@pytest.fixture
def brain(settings: Settings, watching: StoreWatchingEmbedder, clock: TickingClock) -> Iterator[Container]:
    built = build_container(settings, embedder=watching, clock=clock)  # the default: beside
    watching.container = built
    yield built
    built.close()


def test_the_record_is_written_while_its_vector_is_computed(brain: Container, watching: StoreWatchingEmbedder) -> None:
    watching.baseline = brain.backend.records.count()
    result = brain.memory.store(MemoryDraft(type=MemoryType.EVENT, content="Watched: the payroll export moved",
                                            source_agent="ops-bot", client_id="acme"))
    brain.index.count()  # (any index call waits for the index write behind the store's answer)

    assert watching.saw_record_first == [True]
    assert result.kind is WriteKind.CREATED and result.indexed
    hits = brain.memory.search(SearchRequest(q="payroll export moved", client_id="acme")).hits
    assert [hit.memory.id for hit in hits] == [result.memory.id]


def test_a_duplicate_is_not_embedded_and_answers_as_before(brain: Container, watching: StoreWatchingEmbedder) -> None:
    draft = MemoryDraft(type=MemoryType.FACT, content="Acme pays on the 5th", key="acme-pay-day",
                        source_agent="ops-bot", client_id="acme")
    first = brain.memory.store(draft)

    again = brain.memory.store(draft)

    assert again.kind is WriteKind.DEDUPLICATED and again.memory.id == first.memory.id
    assert watching.texts.count(first.memory.index_text()) == 1


def test_an_imports_vectors_computed_ahead_are_the_ones_indexing_computes(brain: Container) -> None:
    records = [ImportRecord(id=f"imported-{n}", type=MemoryType.FACT, content=f"Imported fact number {n} about Acme",
                            key=f"fact-{n}", source_agent="importer", client_id="acme") for n in range(5)]
    deleted = ImportRecord(id="imported-deleted", type=MemoryType.EVENT, content="A deleted event",
                           source_agent="importer", client_id="acme", deleted_at="2026-01-01T00:00:00Z")
    guard = brain.index
    assert isinstance(guard, GuardedIndex)
    written: dict[str, npt.NDArray[np.float32]] = {}
    upsert = guard.inner.upsert

    def spying_upsert(documents: Sequence[IndexDocument], texts: dict[str, str] | None = None) -> None:
        written.update((document.id, document.vector) for document in documents)
        upsert(documents, texts)

    guard.inner.upsert = spying_upsert  # type: ignore[method-assign]

    report = brain.knowledge.import_records(list(enumerate([*records, deleted])))

    assert report.indexed
    memories = [brain.memory.get(record.id or "") for record in records]
    expected = HashingEmbedder().embed([memory.index_text() for memory in memories])
    assert sorted(written) == sorted(memory.id for memory in memories)
    assert np.allclose(np.stack([written[memory.id] for memory in memories]), expected)


def test_switched_off_a_write_embeds_in_sequence_with_the_same_result(settings: Settings, clock: TickingClock) -> None:
    watching = StoreWatchingEmbedder(wait_seconds=0.2)  # the record cannot arrive: it is written after the vector
    built = build_container(settings.model_copy(update={"embed_beside_writes": False}), embedder=watching,
                            clock=clock)
    try:
        watching.container = built
        watching.baseline = built.backend.records.count()
        result = built.memory.store(MemoryDraft(type=MemoryType.EVENT, content="Watched: the invoices moved",
                                                source_agent="ops-bot", client_id="acme"))
        hits = built.memory.search(SearchRequest(q="invoices moved", client_id="acme")).hits
    finally:
        built.close()

    assert watching.saw_record_first == [False]  # embedded before its record was written
    assert result.kind is WriteKind.CREATED and result.indexed
    assert [hit.memory.id for hit in hits] == [result.memory.id]
