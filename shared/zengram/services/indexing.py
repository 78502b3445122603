"""Keeping the derived search index in step with the record store, and rebuilding it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from zengram.domain.errors import EmbeddingMismatch
from zengram.domain.models import Memory
from zengram.domain.search import IndexAttributes, IndexDocument
from zengram.ports import Embedder, RecordStore, SearchIndex

if TYPE_CHECKING:
    from zengram.ports import Vectors

logger = logging.getLogger(__name__)
EMBED_BATCH = 64


class IndexSync:
    """Pushes record changes to the index. A failure leaves the records marked pending for repair."""

    def __init__(self, store: RecordStore, index: SearchIndex, embedder: Embedder) -> None:
        self._store = store
        self._index = index
        self._embedder = embedder

    def ensure_compatible(self) -> None:
        """Refuses an index built with another embedding model; binds a fresh one to ours."""
        bound = self._index.model_id
        if bound is None:
            self._index.bind_model(self._embedder.model_id, self._embedder.dimension)
        elif bound != self._embedder.model_id:
            raise EmbeddingMismatch(
                f"the search index was built with '{bound}' but the configured embedder is "
                f"'{self._embedder.model_id}'; run `zengram reindex` to re-embed every memory with the "
                "configured model (or configure the original embedder)"
            )

    def index_new_many(self, pairs: Sequence[tuple[Memory, Vectors]]) -> bool:
        """Indexes freshly stored memories whose vectors are already computed."""
        if not pairs:
            return True
        memories = [memory for memory, _ in pairs]
        return self._attempt(memories, lambda: self._index.upsert([_document(m, v) for m, v in pairs]))

    def refresh(self, memories: Sequence[Memory]) -> bool:
        """Brings the index in line with these records: re-embeds live ones, drops deleted ones."""
        return self._attempt(memories, lambda: self._apply(memories, re_embed=True))

    def refresh_attributes(self, memories: Sequence[Memory]) -> bool:
        """For changes that leave the text alone (supersede, delete, restore, category)."""
        return self._attempt(memories, lambda: self._apply(memories, re_embed=False))

    def repair(self, limit: int = 500) -> int:
        """Re-indexes records whose last change did not reach the index. Returns how many were fixed."""
        pending = self._store.pending_index(limit)
        if pending and self.refresh(pending):
            return len(pending)
        return 0

    def repair_until_clean(self, keep_going: Callable[[], bool], batch: int = 500) -> int:
        """Repairs batch after batch until nothing is pending, a batch fails, or `keep_going` says stop."""
        total = 0
        while keep_going() and (repaired := self.repair(limit=batch)):
            total += repaired
        return total

    def reindex(self, on_progress: Callable[[int], None] | None = None) -> int:
        """Drops the index and rebuilds it from the record store with the configured embedder."""
        self._index.clear()
        self._index.bind_model(self._embedder.model_id, self._embedder.dimension)
        done = 0
        for batch in _batches(self._store.iter_all(), EMBED_BATCH):
            live = [memory for memory in batch if not memory.is_deleted]
            self._upsert_embedded(live)
            self._store.mark_indexed({memory.id: memory.revision for memory in batch})
            done += len(batch)
            if on_progress:
                on_progress(done)
        return done

    def _apply(self, memories: Sequence[Memory], *, re_embed: bool) -> None:
        deleted = [memory.id for memory in memories if memory.is_deleted]
        live = [memory for memory in memories if not memory.is_deleted]
        if deleted:
            self._index.delete(deleted)
        if re_embed:
            self._upsert_embedded(live)
        elif live:
            self._index.set_attributes({memory.id: IndexAttributes.of(memory) for memory in live})

    def _upsert_embedded(self, memories: Sequence[Memory]) -> None:
        if not memories:
            return
        vectors = self._embedder.embed([memory.index_text() for memory in memories])
        self._index.upsert([_document(memory, vector) for memory, vector in zip(memories, vectors, strict=True)])

    def _attempt(self, memories: Sequence[Memory], write: Callable[[], None]) -> bool:
        try:
            write()
        except Exception:
            logger.exception("search index write failed; %d record(s) left pending for repair", len(memories))
            return False
        self._store.mark_indexed({memory.id: memory.revision for memory in memories})
        return True


def _document(memory: Memory, vector: Vectors) -> IndexDocument:
    return IndexDocument(
        id=memory.id,
        text=memory.index_text(),
        vector=vector,
        attributes=IndexAttributes.of(memory),
    )


def _batches(items: Iterable[Memory], size: int) -> Iterable[list[Memory]]:
    batch: list[Memory] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
