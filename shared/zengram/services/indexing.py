"""Keeping the derived search index in step with the record store, and rebuilding it."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from zengram.domain.context import CONTEXT_TYPES, ContextPolicy, same_thread, thread_key, with_context
from zengram.domain.errors import EmbeddingMismatch
from zengram.domain.models import Memory, RecordQuery, shifted
from zengram.domain.search import IndexAttributes, IndexDocument
from zengram.ports import Embedder, RecordStore, SearchIndex

if TYPE_CHECKING:
    from zengram.ports import Vectors

logger = logging.getLogger(__name__)
EMBED_BATCH = 64


class IndexSync:
    """Pushes record changes to the index. A failure leaves the records marked pending for repair."""

    def __init__(self, store: RecordStore, index: SearchIndex, embedder: Embedder,
                 context: ContextPolicy | None = None) -> None:
        self._store = store
        self._index = index
        self._embedder = embedder
        self._context = context or ContextPolicy()

    def texts(self, memories: Sequence[Memory], *, from_store: bool = True, new: bool = False,
              recent: dict[tuple[str, str], list[Memory]] | None = None,
              upcoming: Sequence[Memory] = ()) -> dict[str, IndexTexts]:
        """What to index for each memory: keyword text and embedding text, with context when enabled.

        Context is the memories stored just before each one in the same thread (client and agent): the
        earlier ones of this batch (`recent`), and (`from_store`) those in the record store; and, with
        `next_turns`, those stored just after it: later ones of this batch or of `upcoming`, and stored ones.
        `new`: these memories are being stored now, so the thread's newest stored memories are their
        predecessors (and they have no stored followers yet).
        """
        policy = self._context
        if not policy.enabled:
            return {m.id: IndexTexts(m.index_text(), m.index_text()) for m in memories}
        stored = self._threads(memories, newest=new) if from_store else {}
        found: dict[str, IndexTexts] = {}
        recent = {} if recent is None else recent
        later_pool = [*memories, *upcoming] if policy.next_turns else []
        for memory in memories:
            key = thread_key(memory)
            pool = [*recent.get(key, []), *stored.get(key, [])]
            earlier = {p.id: p for p in pool if p.created_at <= memory.created_at
                       and same_thread(memory, p, policy.window)}
            previous = _oldest_first(earlier.values())[-policy.turns:] if policy.turns else []
            later = {p.id: p for p in [*later_pool, *stored.get(key, [])] if p.created_at > memory.created_at
                     and same_thread(p, memory, policy.window)}
            following = _oldest_first(later.values())[: policy.next_turns]
            text = with_context(memory, previous, following)
            found[memory.id] = IndexTexts(text, text if policy.embed else memory.index_text())
            recent[key] = [*recent.get(key, [])[-policy.turns:], memory] if policy.turns else []
        return found

    def _threads(self, memories: Sequence[Memory], *, newest: bool = False, before: bool = False, page: int = 500,
                 pages: int = 20) -> dict[tuple[str, str], list[Memory]]:
        """Each thread's live stored events from `window` before its earliest memory here on, one paged
        query per thread; `newest`: only the thread's last few (all a memory being stored now needs);
        `before`: surely including the `next_turns` stored just before the earliest memory."""
        oldest: dict[tuple[str, str], Memory] = {}
        for memory in memories:
            key = thread_key(memory)
            if memory.type in CONTEXT_TYPES and (key not in oldest or memory.created_at < oldest[key].created_at):
                oldest[key] = memory
        found: dict[tuple[str, str], list[Memory]] = {}
        for key, first in oldest.items():
            query = RecordQuery(type=first.type, client_id=first.client_id, source_agent=first.source_agent,
                                since=shifted(first.created_at, -self._context.window),
                                limit=self._context.turns + 1 if newest else page)
            if newest:
                found[key] = self._store.query(query)
                continue
            found[key] = []
            for number in range(pages):
                batch = self._store.query(query.model_copy(update={"offset": number * page}))
                found[key] += batch
                # Newest first: once a page reaches back past the earliest memory, the rest is in hand.
                older = sum(m.created_at < first.created_at for m in batch)
                if len(batch) < page or older > (self._context.next_turns if before else 0):
                    break
        return found

    def _followers(self, memories: Sequence[Memory]) -> list[Memory]:
        """Live events whose indexed context includes one of these (to re-index after a change): the
        `turns` after each, and the `next_turns` before it."""
        policy = self._context
        changed = {m.id for m in memories}
        stored = self._threads(memories, before=policy.next_turns > 0)
        followers: dict[str, Memory] = {}
        for memory in memories:
            thread = [f for f in stored.get(thread_key(memory), []) if f.id not in changed]
            later = [f for f in thread if f.created_at >= memory.created_at and same_thread(f, memory, policy.window)]
            for follower in _oldest_first(later)[: policy.turns]:
                followers[follower.id] = follower
            earlier = [p for p in thread if p.created_at <= memory.created_at
                       and same_thread(memory, p, policy.window)]
            for predecessor in _oldest_first(earlier)[-policy.next_turns:] if policy.next_turns else []:
                followers[predecessor.id] = predecessor
        return list(followers.values())

    def _predecessors(self, created: Sequence[Memory]) -> list[Memory]:
        """Stored events whose following context now includes one of these freshly stored ones."""
        policy = self._context
        events = [m for m in created if m.type in CONTEXT_TYPES]
        if not policy.next_turns or not events:
            return []
        new = {m.id for m in events}
        found: dict[str, Memory] = {}
        for memories in _by_thread(events).values():
            first = min(memories, key=lambda m: (m.created_at, m.id))
            query = RecordQuery(type=first.type, client_id=first.client_id, source_agent=first.source_agent,
                                since=shifted(first.created_at, -policy.window),
                                limit=policy.next_turns + len(memories) + 1)
            earlier = [p for p in self._store.query(query) if p.id not in new and p.created_at <= first.created_at
                       and same_thread(first, p, policy.window)]
            found.update((p.id, p) for p in _oldest_first(earlier)[-policy.next_turns:])
        return list(found.values())

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

    def index_new_many(self, pairs: Sequence[tuple[Memory, Vectors]],
                       texts: dict[str, IndexTexts] | None = None) -> bool:
        """Indexes freshly stored memories whose vectors (and, optionally, texts) are already computed."""
        if not pairs:
            return True
        memories = [memory for memory, _ in pairs]
        keyword = {m.id: t.keyword for m, t in ((m, (texts or {}).get(m.id)) for m in memories) if t}
        indexed = self._attempt(memories, lambda: self._index.upsert(
            [_document(m, v, keyword.get(m.id)) for m, v in pairs]))
        predecessors = self._predecessors(memories)
        if predecessors:  # their following context now includes these; a failure only leaves it stale
            # Only a full re-index brings a record in line; a keyword-text refresh leaves its mark alone.
            self._attempt(predecessors, lambda: self._refresh_context(predecessors), mark=self._context.embed)
        return indexed

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
        recent: dict[tuple[str, str], list[Memory]] = {}  # context carried from batch to batch
        held: list[Memory] = []  # events whose following context may still come in a later batch
        for batch in _batches(self._store.iter_all(), EMBED_BATCH):
            ready, held = self._ready([*held, *(m for m in batch if not m.is_deleted)], batch[-1].created_at)
            self._upsert_embedded(ready, recent=recent, upcoming=held)
            self._store.mark_indexed({m.id: m.revision for m in [*ready, *(m for m in batch if m.is_deleted)]})
            done += len(batch)
            if on_progress:
                on_progress(done)
        self._upsert_embedded(held, recent=recent)
        self._store.mark_indexed({m.id: m.revision for m in held})
        return done

    def _ready(self, pool: list[Memory], newest: datetime) -> tuple[list[Memory], list[Memory]]:
        """Splits a rebuild's oldest-first pool into the prefix whose following context is complete (each
        has its `next_turns` followers in the pool, or is too old for more to come) and the rest."""
        policy = self._context
        if not policy.next_turns:
            return pool, []
        threads = _by_thread(pool)
        for position, memory in enumerate(pool):
            if memory.type not in CONTEXT_TYPES or shifted(memory.created_at, policy.window) < newest:
                continue
            followers = (f for f in threads[thread_key(memory)] if f.created_at > memory.created_at
                         and same_thread(f, memory, policy.window))
            if len(list(itertools.islice(followers, policy.next_turns))) < policy.next_turns:
                return pool[:position], pool[position:]
        return pool, []

    def _apply(self, memories: Sequence[Memory], *, re_embed: bool) -> None:
        deleted = [memory.id for memory in memories if memory.is_deleted]
        live = [memory for memory in memories if not memory.is_deleted]
        if deleted:
            self._index.delete(deleted)
        if re_embed:
            self._upsert_embedded(live)
        elif live:
            self._index.set_attributes({memory.id: IndexAttributes.of(memory) for memory in live})
        if self._context.enabled:
            # A changed, deleted or restored event is context of the events after it: index them anew so
            # no old or forgotten text lingers in their keyword entries.
            self._refresh_context(self._followers([m for m in memories if m.type in CONTEXT_TYPES]))

    def _refresh_context(self, memories: Sequence[Memory]) -> None:
        """Re-indexes unchanged events whose context changed. Unless the context is embedded, their embedding
        text (their own) is what they were indexed with: only the keyword text is replaced, the vector kept."""
        if not memories:
            return
        if self._context.embed:
            self._upsert_embedded(memories)
            return
        texts = self.texts(memories)
        self._index.set_texts({memory.id: texts[memory.id].keyword for memory in memories})

    def _upsert_embedded(self, memories: Sequence[Memory], *,
                         recent: dict[tuple[str, str], list[Memory]] | None = None,
                         upcoming: Sequence[Memory] = ()) -> None:
        if not memories:
            return
        # A rebuild walks the store oldest first and carries each thread's last memories (`recent`) and the
        # ones it holds back (`upcoming`); the store's newest ones are not context there. A refresh reads
        # them from the store.
        texts = self.texts(memories, from_store=recent is None, recent=recent, upcoming=upcoming)
        vectors = self._embedder.embed([texts[memory.id].embedding for memory in memories])
        self._index.upsert([_document(memory, vector, texts[memory.id].keyword)
                            for memory, vector in zip(memories, vectors, strict=True)])

    def _attempt(self, memories: Sequence[Memory], write: Callable[[], None], *, mark: bool = True) -> bool:
        """Runs an index write; on success (and with `mark`) the records' current revisions are indexed."""
        try:
            write()
        except Exception:
            logger.exception("search index write failed; %d record(s) left pending for repair", len(memories))
            return False
        if mark:
            self._store.mark_indexed({memory.id: memory.revision for memory in memories})
        return True


@dataclass(frozen=True)
class IndexTexts:
    keyword: str
    embedding: str


def _document(memory: Memory, vector: Vectors, text: str | None = None) -> IndexDocument:
    return IndexDocument(
        id=memory.id,
        text=text if text is not None else memory.index_text(),
        vector=vector,
        attributes=IndexAttributes.of(memory),
    )


def _oldest_first(memories: Iterable[Memory]) -> list[Memory]:
    return sorted(memories, key=lambda m: (m.created_at, m.id))


def _by_thread(memories: Iterable[Memory]) -> dict[tuple[str, str], list[Memory]]:
    threads: dict[tuple[str, str], list[Memory]] = {}
    for memory in memories:
        threads.setdefault(thread_key(memory), []).append(memory)
    return threads


def _batches(items: Iterable[Memory], size: int) -> Iterable[list[Memory]]:
    batch: list[Memory] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
