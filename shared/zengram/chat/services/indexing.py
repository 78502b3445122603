"""Keeping the shared search index in step with subject memories and records (each in its own scope).

Like Zengram's `IndexSync`: a write is stored first and marked pending; the index write follows, and a failure
only leaves the item pending for the repair sweep (`repair`), which runs with Zengram's. A reindex clears the whole
index, so `reindex` re-adds every subject memory and record after Zengram's own rebuild.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from zengram.kernel.outbox import describe_error
from zengram.kernel.ports import Embedder, SearchIndex
from zengram.kernel.search import IndexAttributes, IndexDocument

if TYPE_CHECKING:
    from zengram.kernel.ports import Vectors

logger = logging.getLogger(__name__)
BATCH = 64


class Indexable(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def revision(self) -> int: ...

    @property
    def is_deleted(self) -> bool: ...

    def index_text(self) -> str: ...

    def index_attributes(self) -> IndexAttributes: ...


class Outbox(Protocol):
    """What a chat store offers the index sync (SubjectMemoryStore and RecordBase both do)."""

    def pending_index(self, limit: int) -> Sequence[Indexable]: ...

    def mark_indexed(self, revisions: Mapping[str, int]) -> None: ...

    def iter_all(self) -> Iterator[Indexable]: ...


class ChatIndexSync:
    """Index writes for the items of one store. `ensure_compatible` checks (and binds) the index first: the same
    check Zengram's writes make, so the chat layer never writes vectors of another model."""

    def __init__(self, outbox: Outbox, index: SearchIndex, embedder: Embedder,
                 ensure_compatible: Callable[[], None]) -> None:
        self._outbox = outbox
        self._index = index
        self._embedder = embedder
        self._ensure_compatible = ensure_compatible

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self._embedder.embed(list(texts))

    def write(self, items: Sequence[Indexable], vectors: Mapping[str, Vectors] | None = None) -> bool:
        """Brings the index in line with these items (live ones upserted whole, embedded unless `vectors` has them,
        so an item whose first write failed is complete after any later one; deleted ones removed) and clears
        their pending marks. False when the index could not take it: the items stay pending for the repair sweep."""
        if not items:
            return True
        try:
            self._ensure_compatible()
            self._apply(items, dict(vectors or {}))
        except Exception as error:
            logger.warning("search index write failed; %d chat item(s) left pending for repair: %s", len(items),
                           describe_error(error))
            return False
        self._outbox.mark_indexed({item.id: item.revision for item in items})
        return True

    def repair(self, limit: int = 500) -> int:
        """Indexes the items whose last change did not reach the index; returns how many were indexed."""
        pending = list(self._outbox.pending_index(limit))
        done = 0
        for start in range(0, len(pending), BATCH):
            batch = pending[start:start + BATCH]
            if not self.write(batch):
                break  # the index is down: the rest waits for the next sweep
            done += len(batch)
        return done

    def reindex(self) -> int:
        """Upserts every item (after a rebuild cleared the index); returns how many were read."""
        total = 0
        for batch in _batches(self._outbox.iter_all(), BATCH):
            self.write(batch)
            total += len(batch)
        return total

    def _apply(self, items: Sequence[Indexable], vectors: dict[str, Vectors]) -> None:
        deleted = [item.id for item in items if item.is_deleted]
        live = [item for item in items if not item.is_deleted]
        if deleted:
            self._index.delete(deleted)
        if not live:
            return
        missing = [item for item in live if item.id not in vectors]
        if missing:
            vectors.update(zip((item.id for item in missing), self.embed([i.index_text() for i in missing]),
                               strict=True))
        self._index.upsert([IndexDocument(item.id, item.index_text(), vectors[item.id], item.index_attributes())
                            for item in live])


def _batches(items: Iterable[Indexable], size: int) -> Iterator[list[Indexable]]:
    batch: list[Indexable] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
