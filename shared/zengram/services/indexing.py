"""Keeping the derived search index in step with the record store, and rebuilding it."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from zengram.domain.context import CONTEXT_TYPES, ContextPolicy, same_thread, thread_key, with_context
from zengram.domain.errors import EmbeddingMismatch, IndexRejected, IndexUnavailable, ZengramError
from zengram.domain.models import Memory, RecordQuery, shifted, utc_now
from zengram.domain.outbox import describe_error
from zengram.domain.search import IndexAttributes, IndexDocument
from zengram.ports import Clock, Embedder, IndexOutbox, RecordStore, SearchIndex

if TYPE_CHECKING:
    from zengram.ports import Vectors

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
                found[key] = self._records.query(query)
                continue
            found[key] = []
            for number in range(pages):
                batch = self._records.query(query.model_copy(update={"offset": number * page}))
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
            earlier = [p for p in self._records.query(query) if p.id not in new and p.created_at <= first.created_at
                       and same_thread(first, p, policy.window)]
            found.update((p.id, p) for p in _oldest_first(earlier)[-policy.next_turns:])
        return list(found.values())

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

    def _upsert_embedded(self, memories: Sequence[Memory]) -> None:
        if memories:
            self._index.upsert(self._documents(memories))

    def _documents(self, memories: Sequence[Memory], *, recent: dict[tuple[str, str], list[Memory]] | None = None,
                   upcoming: Sequence[Memory] = ()) -> list[IndexDocument]:
        """The documents for these records: texts (with context) and their embeddings.

        A rebuild walks the store oldest first and carries each thread's last memories (`recent`) and the
        ones it holds back (`upcoming`); the store's newest ones are not context there. A refresh reads
        them from the store."""
        texts = self.texts(memories, from_store=recent is None, recent=recent, upcoming=upcoming)
        vectors = self._embedder.embed([texts[memory.id].embedding for memory in memories])
        return [_document(memory, vector, texts[memory.id].keyword)
                for memory, vector in zip(memories, vectors, strict=True)]

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
