"""An import's batch is embedded and indexed chunk by chunk (#18): a chunk's index writes overlap the embedding of
the chunks after it, every record is stored before any is indexed, and the vectors are the ones a write embedding
its text alone gets."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt
import pytest
from zengram.assembly.containers import Container, build_container
from zengram.kernel.ports import Embedder
from zengram.kernel.search import IndexDocument
from zengram.memory.domain.models import ImportStatus, MemoryType
from zengram.memory.domain.requests import ImportRecord
from zengram.memory.services.index_guard import GuardedIndex
from zengram.settings import Settings

from tests.support import HashingEmbedder, TickingClock

WAIT_SECONDS = 10.0  # a bound on a wait that ends at once when the code is right, not a timing assertion
IMPORT_CHUNK = 32  # set in `brain` (the default is one chunk per batch)
RECORDS = 2 * IMPORT_CHUNK + 5  # three chunks, the last one short


def records(count: int = RECORDS, client: str = "acme") -> list[ImportRecord]:
    return [ImportRecord(id=f"imported-{n}", type=MemoryType.EVENT, source_agent="importer", client_id=client,
                         content=f"Imported turn {n}: the {('payroll', 'invoice', 'ledger')[n % 3]} run number {n}")
            for n in range(count)]


class LastChunkWaitsForTheFirstOnes(HashingEmbedder):
    """Embedding the batch's last chunk waits (boundedly) until the index was sent a document of the first chunk,
    and notes whether it was: only an import indexing the first chunk before the last one is embedded gets there."""

    def __init__(self) -> None:
        super().__init__()
        self.indexed: set[str] = set()  # ids the index was sent (see `brain`)
        self.first_indexed_before_last_embedded: list[bool] = []
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.texts += texts
        if any(text.startswith(f"Imported turn {RECORDS - 1}:") for text in texts):
            arrived = threading.Event()
            for _ in range(int(WAIT_SECONDS / 0.01)):
                if "imported-0" in self.indexed:
                    arrived.set()
                    break
                arrived.wait(0.01)
            self.first_indexed_before_last_embedded.append(arrived.is_set())
        return super().embed(texts)


@pytest.fixture
def gating() -> LastChunkWaitsForTheFirstOnes:
    return LastChunkWaitsForTheFirstOnes()


@pytest.fixture
def brain(settings: Settings, gating: LastChunkWaitsForTheFirstOnes, clock: TickingClock) -> Iterator[Container]:
    built = build_container(settings.model_copy(update={"import_embed_chunk": IMPORT_CHUNK}), embedder=gating,
                            clock=clock)
    guard = built.index
    assert isinstance(guard, GuardedIndex)
    upsert = guard.inner.upsert

    def noting_upsert(documents: Sequence[IndexDocument], texts: dict[str, str] | None = None) -> None:
        upsert(documents, texts)
        gating.indexed.update(document.id for document in documents)

    guard.inner.upsert = noting_upsert  # type: ignore[method-assign]
    yield built
    built.close()


def test_a_chunk_is_indexed_while_later_chunks_are_still_embedded(brain: Container,
                                                                   gating: LastChunkWaitsForTheFirstOnes) -> None:
    report = brain.knowledge.import_records(list(enumerate(records())))

    assert gating.first_indexed_before_last_embedded == [True]
    assert report.indexed
    assert [item.status for item in report.items] == [ImportStatus.IMPORTED] * RECORDS
    assert [item.index for item in report.items] == list(range(RECORDS))
    # Each text embedded once: the vectors computed ahead are the ones indexed, never computed again.
    assert sorted(gating.texts) == sorted(record.content for record in records())


def test_every_record_is_stored_before_any_is_indexed(brain: Container) -> None:
    """A record's indexed context may come from a later chunk (its next turn): all are stored first."""
    stored_counts: list[int] = []
    guard = brain.index
    assert isinstance(guard, GuardedIndex)
    upsert = guard.inner.upsert

    def counting_upsert(documents: Sequence[IndexDocument], texts: dict[str, str] | None = None) -> None:
        stored_counts.append(brain.backend.records.count())
        upsert(documents, texts)

    guard.inner.upsert = counting_upsert  # type: ignore[method-assign]
    before = brain.backend.records.count()

    brain.knowledge.import_records(list(enumerate(records())))

    assert len(stored_counts) >= 3  # one upsert per chunk at least
    assert set(stored_counts) == {before + RECORDS}


def test_skipped_and_failed_records_keep_their_place_across_chunks(brain: Container) -> None:
    batch = records()
    batch[IMPORT_CHUNK + 1] = batch[1].model_copy(update={"id": "same-text-again"})  # duplicate content
    batch[-1] = batch[0]  # duplicate id, in the last chunk

    report = brain.knowledge.import_records(list(enumerate(batch)))

    statuses = {item.index: item.status for item in report.items}
    assert statuses[IMPORT_CHUNK + 1] is ImportStatus.SKIPPED and statuses[RECORDS - 1] is ImportStatus.SKIPPED
    assert sum(status is ImportStatus.IMPORTED for status in statuses.values()) == RECORDS - 2
    assert report.indexed


def test_an_index_outage_leaves_every_imported_record_stored_and_pending(brain: Container) -> None:
    guard = brain.index
    assert isinstance(guard, GuardedIndex)

    def index_down(documents: Sequence[IndexDocument]) -> None:
        raise ConnectionError("index down")

    guard.inner.upsert = index_down  # type: ignore[method-assign]

    report = brain.knowledge.import_records(list(enumerate(records())))

    assert not report.indexed
    assert [item.status for item in report.items] == [ImportStatus.IMPORTED] * RECORDS
    assert len(brain.backend.records.get_many([f"imported-{n}" for n in range(RECORDS)])) == RECORDS
    pending = {memory.id for memory in brain.outbox.pending_index(10 * RECORDS)}
    assert pending >= {f"imported-{n}" for n in range(RECORDS)}


@pytest.mark.slow
def test_imported_vectors_are_the_one_text_at_a_time_vectors_of_the_real_model(
        settings: Settings, minilm: Embedder, clock: TickingClock) -> None:
    """The default MiniLM (int8, passes merged and spread over threads): an import's vectors equal the ones each
    text gets embedded alone, whatever chunk, merged call or thread computed them."""
    built = build_container(settings.model_copy(update={"import_embed_chunk": IMPORT_CHUNK}), embedder=minilm,
                            clock=clock)
    try:
        guard = built.index
        assert isinstance(guard, GuardedIndex)
        written: dict[str, npt.NDArray[np.float32]] = {}
        upsert = guard.inner.upsert

        def spying_upsert(documents: Sequence[IndexDocument], texts: dict[str, str] | None = None) -> None:
            written.update((document.id, document.vector) for document in documents)
            upsert(documents, texts)

        guard.inner.upsert = spying_upsert  # type: ignore[method-assign]
        batch = records()
        report = built.knowledge.import_records(list(enumerate(batch)))
        memories = [built.memory.get(record.id or "") for record in batch]
    finally:
        built.close()

    assert report.indexed
    alone = np.stack([minilm.embed([memory.index_text()])[0] for memory in memories])
    imported = np.stack([written[memory.id] for memory in memories])
    cosines = np.sum(alone * imported, axis=1)
    assert cosines.min() >= 0.9999


class CallRecordingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.call_sizes: list[int] = []

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.call_sizes.append(len(texts))
        return super().embed(texts)


@pytest.mark.parametrize(("chunk", "expected_calls"), [(10, [10, 10, 5]), (1000, [25])])
def test_the_chunk_size_is_a_setting(settings: Settings, clock: TickingClock, chunk: int,
                                     expected_calls: list[int]) -> None:
    embedder = CallRecordingEmbedder()
    built = build_container(settings.model_copy(update={"import_embed_chunk": chunk}), embedder=embedder, clock=clock)
    try:
        report = built.knowledge.import_records(list(enumerate(records(25))))
    finally:
        built.close()

    assert report.indexed and len(report.items) == 25
    assert sorted(embedder.call_sizes) == sorted(expected_calls)
