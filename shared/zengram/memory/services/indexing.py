"""Keeping the derived search index in step with the record store, and rebuilding it."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from zengram.kernel.errors import EmbeddingMismatch, IndexRejected, IndexUnavailable, ZengramError
from zengram.kernel.outbox import describe_error
from zengram.kernel.ports import Clock, Embedder, SearchIndex
from zengram.kernel.search import IndexDocument
from zengram.kernel.timestamps import utc_now
from zengram.memory.domain.context import (
    CONTEXT_TYPES,
    ContextPolicy,
    Neighbours,
    context_of,
    same_thread,
    stored_order,
    thread_key,
    with_context,
)
from zengram.memory.domain.models import Memory, index_attributes, shifted
from zengram.memory.ports import IndexOutbox, RecordStore

if TYPE_CHECKING:
    from zengram.kernel.ports import Vectors

logger = logging.getLogger(__name__)
EMBED_BATCH = 64
# Failures that are about the index as a whole, not about the records being written: the sweep stops on them
# (and counts no attempt against any record).
_INDEX_WIDE = (IndexUnavailable, EmbeddingMismatch)


@dataclass
class RepairReport:
    """What a repair sweep did: records indexed, failed attempts counted, records parked by those, and why it
    stopped early (the index unavailable or built with another model), if it did."""

    indexed: int = 0
    failed: int = 0
    parked: int = 0
    stopped: str | None = None


class IndexSync:
    """Pushes record changes to the index. A failure leaves the records marked pending for repair.

    The index is checked on first use, not when this is built: a host whose index is down still stores records.
    `park_after`: failed repair attempts after which a record is parked (None: never parked).
    """

    def __init__(self, records: RecordStore, outbox: IndexOutbox, index: SearchIndex, embedder: Embedder,
                 context: ContextPolicy | None = None, *, clock: Clock | None = None,
                 park_after: int | None = None) -> None:
        self._records = records
        self._outbox = outbox
        self._index = index
        self._embedder = embedder
        self._context = context or ContextPolicy()
        self._now = clock.now if clock is not None else utc_now
        self._park_after = park_after
        self._compatible = False  # once the index was found bound to our model, it is not asked again

    def texts(self, memories: Sequence[Memory], *, from_store: bool = True, new: bool = False,
              recent: dict[tuple[str, str], list[Memory]] | None = None,
              upcoming: Sequence[Memory] = ()) -> dict[str, IndexTexts]:
        """What to index for each memory: keyword text and embedding text, with context when enabled.

        Context is each event's nearest events in its thread (`context_of`), found among the earlier ones of
        this batch (`recent`), the later ones of this batch or of `upcoming` (with `next_turns`), and (with
        `from_store`) its neighbours in the record store: a bounded read per event, whatever the length of the
        thread. `new`: these memories are being stored now, so they have no stored followers yet.
        """
        policy = self._context
        if not policy.enabled:
            return {m.id: IndexTexts(m.index_text(), m.index_text()) for m in memories}
        found: dict[str, IndexTexts] = {}
        recent = {} if recent is None else recent
        later_pool = [*memories, *upcoming] if policy.next_turns else []
        for memory in memories:
            key = thread_key(memory)
            stored = self._stored_neighbours(memory, following=not new) if from_store else Neighbours()
            context = context_of(memory, [*recent.get(key, []), *stored.previous, *later_pool, *stored.following],
                                 policy)
            text = with_context(memory, context.previous, context.following)
            found[memory.id] = IndexTexts(text, text if policy.embed else memory.index_text())
            recent[key] = [*recent.get(key, [])[-policy.turns:], memory] if policy.turns else []
        return found

    def _stored_neighbours(self, memory: Memory, *, following: bool = True, before: int | None = None,
                           after: int | None = None) -> Neighbours:
        """`memory`'s nearest stored events (by default as many as its own context takes), none for a
        memory that takes no context."""
        if memory.type not in CONTEXT_TYPES:
            return Neighbours()
        policy = self._context
        return self._records.thread_neighbours(
            memory, before=policy.turns if before is None else before,
            after=(policy.next_turns if after is None else after) if following else 0)

    def _followers(self, memories: Sequence[Memory]) -> list[Memory]:
        """Live events whose indexed context includes one of these (to re-index after a change): the
        `turns` after each, and the `next_turns` before it."""
        policy = self._context
        changed = {m.id for m in memories}
        followers: dict[str, Memory] = {}
        for memory in memories:
            stored = self._stored_neighbours(memory, before=policy.next_turns, after=policy.turns)
            for follower in stored.following:
                if follower.id not in changed and same_thread(follower, memory, policy.window):
                    followers[follower.id] = follower
            for predecessor in stored.previous:
                if predecessor.id not in changed and same_thread(memory, predecessor, policy.window):
                    followers[predecessor.id] = predecessor
        return list(followers.values())

    def embedding_texts(self, memories: Sequence[Memory]) -> list[str]:
        """What to embed for memories being stored now: each one's own text; with `embed`, its text with the
        context it has now (neighbours read from the store)."""
        if not self._context.embed:
            return [memory.index_text() for memory in memories]
        texts = self.texts(memories, new=True)
        return [texts[memory.id].embedding for memory in memories]

    def new_context(self, created: Sequence[Memory]) -> NewContext:
        """Keyword texts for freshly stored memories, and for the stored events whose following context now
        includes one of them (by id: the event and its new text). Needs no vector: a write reads it while its
        embedding runs, and hands it to `index_new_many`.

        One bounded read per thread serves both: the events stored before the thread's earliest new one (as
        many as its own context and its predecessors' contexts take) and any stored just after it.
        """
        policy = self._context
        texts = {memory.id: memory.index_text() for memory in created}
        predecessors: dict[str, tuple[Memory, str]] = {}
        if not policy.enabled:
            return NewContext(texts, predecessors)
        for thread in _by_thread(m for m in created if m.type in CONTEXT_TYPES).values():
            first, new = min(thread, key=stored_order), {m.id for m in thread}
            stored = self._records.thread_neighbours(first, before=policy.turns + policy.next_turns,
                                                   after=policy.next_turns)
            earlier = [m for m in stored.previous if m.id not in new]
            pool = [*earlier, *thread, *(m for m in stored.following if m.id not in new)]
            for memory in thread:
                texts[memory.id] = _context_text(memory, pool, policy)
            for predecessor in earlier[-policy.next_turns:] if policy.next_turns else []:
                if same_thread(first, predecessor, policy.window):
                    predecessors[predecessor.id] = (predecessor, _context_text(predecessor, pool, policy))
        return NewContext(texts, predecessors)

    def ensure_compatible(self) -> None:
        """Refuses an index built with another embedding model (EmbeddingMismatch); binds a fresh one to ours.
        Asks the index once per process; an index that cannot be asked raises IndexUnavailable."""
        if self._compatible:
            return
        bound = self._index.model_id
        if bound is None:
            self._index.bind_model(self._embedder.model_id, self._embedder.dimension)
        elif bound != self._embedder.model_id:
            raise EmbeddingMismatch(
                f"the search index was built with '{bound}' but the configured embedder is "
                f"'{self._embedder.model_id}'; run `zengram reindex` to re-embed every memory with the "
                "configured model (or configure the original embedder)"
            )
        self._compatible = True

    def index_new_many(self, pairs: Sequence[tuple[Memory, Vectors]], context: NewContext | None = None) -> bool:
        """Indexes freshly stored memories whose vectors are already computed (`embedding_texts`), with their
        context (`new_context`, read now unless given); the stored events just before them gain them as
        following context."""
        if not pairs:
            return True
        memories = [memory for memory, _ in pairs]
        texts, predecessors = context or self.new_context(memories)
        documents = [_document(m, v, texts[m.id]) for m, v in pairs]
        if predecessors and not self._context.embed:
            # Their vectors are their own text's: the keyword text alone changes, in the new memories' own index
            # write (one transaction); a refresh keeps their mark. A failure leaves the new ones pending.
            new_texts = {memory_id: text for memory_id, (_, text) in predecessors.items()}
            return self._attempt(memories, lambda: self._index.upsert(documents, new_texts))
        indexed = self._attempt(memories, lambda: self._index.upsert(documents))
        if predecessors:  # their vectors hold the context too: only a re-embedding brings them in line
            before = [memory for memory, _ in predecessors.values()]
            self._attempt(before, lambda: self._upsert_embedded(before))  # a failure only leaves their context stale
        return indexed

    def refresh(self, memories: Sequence[Memory], vectors: Mapping[str, Vectors] | None = None) -> bool:
        """Brings the index in line with these records: re-embeds live ones, drops deleted ones. `vectors`:
        ones computed ahead (`embed_ahead`) for some of them, by id, used instead of embedding those again."""
        return self._attempt(memories, lambda: self._apply(memories, re_embed=True, vectors=vectors))

    def embed_ahead(self, memories: Sequence[Memory], executor: Executor) -> Future[dict[str, Vectors]] | None:
        """Starts embedding these memories on `executor` before they are stored, when their vectors depend on
        their own text alone (no context embedded; else None: the context is read from the store once they are
        in it). The vectors are those `refresh` would compute; pass them to it."""
        if self._context.embed or not memories:
            return None
        ids = [memory.id for memory in memories]
        texts = [memory.index_text() for memory in memories]
        return executor.submit(lambda: dict(zip(ids, self._embedder.embed(texts), strict=True)))

    def refresh_attributes(self, memories: Sequence[Memory]) -> bool:
        """For changes that leave the text alone (supersede, delete, restore, category)."""
        return self._attempt(memories, lambda: self._apply(memories, re_embed=False))

    def repair(self, limit: int = 500) -> RepairReport:
        """Re-indexes one batch of records whose last change did not reach the index (see `repair_until_clean`)."""
        report = RepairReport()
        self._repair(self._outbox.pending_index(limit), report)
        return report

    def repair_until_clean(self, keep_going: Callable[[], bool], batch: int = 500) -> RepairReport:
        """The repair sweep: re-indexes pending records batch after batch until each was tried once, the index
        turns out to be unavailable, or `keep_going` says stop.

        Each record is judged on its own: a batch that fails is split in halves until the failing records are
        alone (so one bad document costs a few extra requests, not the batch). A record that still fails gets a
        failed attempt counted, its error kept, and goes to the back of the queue; after `park_after` attempts it
        is parked. An index that is down, or built with another model, stops the sweep and blames no record.
        """
        report = RepairReport()
        tried: set[str] = set()  # failed records go to the back of the queue: met again, the sweep is done
        while keep_going():
            pending = [memory for memory in self._outbox.pending_index(batch) if memory.id not in tried]
            if not pending:
                break
            tried.update(memory.id for memory in pending)
            self._repair(pending, report)
            if report.stopped:
                break
        return report

    def retry_parked(self) -> int:
        """Puts every parked record back in the repair queue with no attempts counted (once the cause is fixed);
        returns how many. The next sweep tries them again."""
        return self._outbox.requeue_parked(self._now())

    def _repair(self, memories: Sequence[Memory], report: RepairReport) -> None:
        if not memories:
            return
        try:
            self.ensure_compatible()
        except _INDEX_WIDE as error:
            self._stop(report, error, len(memories))
            return
        self._repair_part(memories, report)

    def _repair_part(self, memories: Sequence[Memory], report: RepairReport) -> None:
        try:
            self._apply(memories, re_embed=True)
        except _INDEX_WIDE as error:
            self._stop(report, error, len(memories))
            return
        except Exception as error:
            if len(memories) == 1:
                self._count_failure(memories[0], error, report)
                return
            middle = len(memories) // 2
            for part in (memories[:middle], memories[middle:]):
                self._repair_part(part, report)
                if report.stopped:
                    return
            return
        self._outbox.mark_indexed({memory.id: memory.revision for memory in memories})
        report.indexed += len(memories)

    def _count_failure(self, memory: Memory, error: BaseException, report: RepairReport) -> None:
        reason = describe_error(error)
        outcome = self._outbox.record_index_failure(memory.id, memory.revision, reason, self._now(),
                                                   self._park_after)
        report.failed += 1
        if outcome is not None and outcome.parked:
            report.parked += 1
            logger.warning("memory %s parked after %d failed index attempts: %s", memory.id, outcome.attempts, reason)
        else:
            logger.warning("memory %s could not be indexed (left pending): %s", memory.id, reason)

    @staticmethod
    def _stop(report: RepairReport, error: BaseException, waiting: int) -> None:
        report.stopped = describe_error(error)
        logger.warning("repair sweep stopped, %d record(s) left pending: %s", waiting, report.stopped)

    def reindex(self, on_progress: Callable[[int], None] | None = None) -> int:
        """Drops the index and rebuilds it from the record store with the configured embedder. A document the
        index refuses does not stop the rebuild: its record is left pending with the error counted (the repair
        sweep retries it, /stats shows it). Returns how many records were read."""
        self._index.clear()
        self._index.bind_model(self._embedder.model_id, self._embedder.dimension)
        self._compatible = True
        done = 0
        recent: dict[tuple[str, str], list[Memory]] = {}  # context carried from batch to batch
        held: list[Memory] = []  # events whose following context may still come in a later batch
        for batch in _batches(self._records.iter_all(), EMBED_BATCH):
            ready, held = self._ready([*held, *(m for m in batch if not m.is_deleted)], batch[-1].created_at)
            refused = self._rebuild(ready, recent=recent, upcoming=held)
            self._settle([*ready, *(m for m in batch if m.is_deleted)], refused)
            done += len(batch)
            if on_progress:
                on_progress(done)
        self._settle(held, self._rebuild(held, recent=recent))
        return done

    def _rebuild(self, memories: Sequence[Memory], *, recent: dict[tuple[str, str], list[Memory]],
                 upcoming: Sequence[Memory] = ()) -> dict[str, str]:
        """Indexes a rebuild's batch; returns the documents the index refused, with why."""
        if not memories:
            return {}
        return self._upsert_each(self._documents(memories, recent=recent, upcoming=upcoming))

    def _upsert_each(self, documents: Sequence[IndexDocument]) -> dict[str, str]:
        """Upserts, splitting a refused request until the refused documents are alone; returns those (an index
        that is down still raises)."""
        try:
            self._index.upsert(documents)
        except IndexRejected as error:
            wanted = {document.id for document in documents}
            if error.failures and set(error.failures) <= wanted:  # the index named them; it wrote the rest
                return dict(error.failures)
            if len(documents) == 1:
                return {documents[0].id: describe_error(error)}
            middle = len(documents) // 2
            return {**self._upsert_each(documents[:middle]), **self._upsert_each(documents[middle:])}
        return {}

    def _settle(self, memories: Sequence[Memory], refused: dict[str, str]) -> None:
        """Marks a rebuild's records indexed, but for the refused ones: those get a failed attempt counted."""
        self._outbox.mark_indexed({m.id: m.revision for m in memories if m.id not in refused})
        for memory in memories:
            if memory.id in refused:
                self._outbox.record_index_failure(memory.id, memory.revision, refused[memory.id], self._now(),
                                                 self._park_after)
                logger.warning("reindex: memory %s refused by the index: %s", memory.id, refused[memory.id])

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

    def _apply(self, memories: Sequence[Memory], *, re_embed: bool,
               vectors: Mapping[str, Vectors] | None = None) -> None:
        deleted = [memory.id for memory in memories if memory.is_deleted]
        live = [memory for memory in memories if not memory.is_deleted]
        if deleted:
            self._index.delete(deleted)
        if re_embed:
            self._upsert_embedded(live, vectors)
        elif live:
            self._index.set_attributes({memory.id: index_attributes(memory) for memory in live})
        if self._context.enabled:
            # A changed, deleted or restored event is context of the events after it: index them anew so
            # no old or forgotten text lingers in their keyword entries.
            followers = self._followers([m for m in memories if m.type in CONTEXT_TYPES])
            try:
                self._refresh_context(followers)
            except IndexRejected as error:  # a neighbour the index refuses only keeps a stale context; these are done
                logger.warning("context of %d neighbouring record(s) left stale: %s", len(followers),
                               describe_error(error))

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

    def _upsert_embedded(self, memories: Sequence[Memory], vectors: Mapping[str, Vectors] | None = None) -> None:
        if memories:
            self._index.upsert(self._documents(memories, vectors=vectors))

    def _documents(self, memories: Sequence[Memory], *, recent: dict[tuple[str, str], list[Memory]] | None = None,
                   upcoming: Sequence[Memory] = (), vectors: Mapping[str, Vectors] | None = None,
                   ) -> list[IndexDocument]:
        """The documents for these records: texts (with context) and their embeddings (those in `vectors`,
        computed ahead from their own text, are not computed again; only valid while no context is embedded).

        A rebuild walks the store oldest first and carries each thread's last memories (`recent`) and the
        ones it holds back (`upcoming`); the store's newest ones are not context there. A refresh reads
        them from the store."""
        texts = self.texts(memories, from_store=recent is None, recent=recent, upcoming=upcoming)
        known = dict(vectors or {}) if not self._context.embed else {}
        missing = [memory for memory in memories if memory.id not in known]
        if missing:
            known.update(zip((memory.id for memory in missing),
                             self._embedder.embed([texts[memory.id].embedding for memory in missing]), strict=True))
        return [_document(memory, known[memory.id], texts[memory.id].keyword) for memory in memories]

    def _attempt(self, memories: Sequence[Memory], write: Callable[[], None], *, mark: bool = True) -> bool:
        """Runs an index write (after checking the index on first use); on success (and with `mark`) the records'
        current revisions are indexed. A failure leaves them pending for the repair sweep."""
        try:
            self.ensure_compatible()
            write()
        except ZengramError as error:  # unavailable (the circuit may be open), another model, a refused document
            logger.warning("search index write failed; %d record(s) left pending for repair: %s", len(memories),
                           describe_error(error))
            return False
        except Exception:
            logger.exception("search index write failed; %d record(s) left pending for repair", len(memories))
            return False
        if mark:
            self._outbox.mark_indexed({memory.id: memory.revision for memory in memories})
        return True


def _context_text(memory: Memory, pool: Sequence[Memory], policy: ContextPolicy) -> str:
    context = context_of(memory, pool, policy)
    return with_context(memory, context.previous, context.following)


class NewContext(NamedTuple):
    """`IndexSync.new_context`: keyword texts by id, and the predecessors' new texts (event and text, by id)."""

    texts: dict[str, str]
    predecessors: dict[str, tuple[Memory, str]]


@dataclass(frozen=True)
class IndexTexts:
    keyword: str
    embedding: str


def _document(memory: Memory, vector: Vectors, text: str | None = None) -> IndexDocument:
    return IndexDocument(
        id=memory.id,
        text=text if text is not None else memory.index_text(),
        vector=vector,
        attributes=index_attributes(memory),
    )


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
