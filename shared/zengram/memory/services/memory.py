"""Storing, finding, changing and forgetting memories: the Zengram core use cases."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from zengram.kernel.content import Scrubber, content_hash
from zengram.kernel.errors import Conflict, InvalidInput
from zengram.kernel.keys import TenantScope
from zengram.kernel.outbox import describe_error
from zengram.kernel.ports import Clock, Embedder, SearchIndex
from zengram.memory.domain.entities import canonical_entity_name, entity_key
from zengram.memory.domain.history import MemoryHistory, history_of
from zengram.memory.domain.lifecycle import memory_from_draft
from zengram.memory.domain.models import (
    GLOBAL_CLIENT,
    Memory,
    MemoryChanges,
    MemoryNotFound,
    MemoryType,
    RecordQuery,
    WriteKind,
    WriteOutcome,
)
from zengram.memory.domain.query import key_terms
from zengram.memory.domain.requests import MemoryDraft, MemoryPatch, SearchRequest
from zengram.memory.domain.scoring import ScoringConfig
from zengram.memory.ports import RecordStore
from zengram.memory.services.embedding import QueryVectorCache
from zengram.memory.services.entity_links import EntityLinker
from zengram.memory.services.indexing import IndexSync, NewContext
from zengram.memory.services.retrieval import RetrievalExtras
from zengram.memory.services.search import MemorySearch, SearchPolicy, SearchResult

if TYPE_CHECKING:
    from zengram.kernel.ports import Vectors
    from zengram.memory.services.write_behind import IndexWriteBehind

logger = logging.getLogger(__name__)
REPAIR_BEHIND_BATCH = 100  # records a successful write behind its answer repairs after one that failed


@dataclass
class EntityBackfill:
    updated: int = 0  # memories that gained entities
    none_found: int = 0  # memories without entities that name none
    skipped: int = 0  # changed while the backfill ran: left for the next run


@dataclass(frozen=True)
class StoreResult:
    kind: WriteKind
    memory: Memory
    superseded: Memory | None = None
    indexed: bool = True
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class UpdateResult:
    memory: Memory
    updated_fields: list[str]


class MemoryService:
    """The Zengram core: store, search, query, change and forget memories. `records` is the source of truth;
    `index_sync` keeps the search index in step with it; `entities` (when wired) extracts and links entities."""

    def __init__(
        self,
        records: RecordStore,
        index_sync: IndexSync,
        index: SearchIndex,
        embedder: Embedder,
        clock: Clock,
        executor: Executor,
        *,
        scrubber: Scrubber,
        scoring: ScoringConfig,
        max_observers: int,
        search_paths: str,
        reinforce_on_search: bool,
        path_fetch: int,
        resolve_client: Callable[[str, frozenset[str] | None], str] | None = None,
        entities: EntityLinker | None = None,
        extras: RetrievalExtras | None = None,
        embed_executor: Executor | None = None,
        write_behind: IndexWriteBehind | None = None,
    ) -> None:
        self._store = records
        self.index_sync = index_sync
        self._embedder = embedder
        self._clock = clock
        self._embed_executor = embed_executor  # new memories' embeddings run there, beside their record writes
        self._write_behind = write_behind  # new memories' index writes are applied there, after the answer
        self._behind_left_pending = False  # a write behind its answer failed: later ones repair what it left
        self.scrubber = scrubber
        self._scoring = scoring
        self._max_observers = max_observers
        self._reinforce_on_search = reinforce_on_search
        self._resolve_client = resolve_client
        self._entities = entities
        self._search = MemorySearch(records, index, index_sync, QueryVectorCache(embedder), executor, clock,
                                    SearchPolicy(scoring, search_paths, path_fetch), extras)

    # -- writes ---------------------------------------------------------------------------------------

    def store(self, draft: MemoryDraft, scope: TenantScope = TenantScope.EVERYONE) -> StoreResult:
        """Scrubs, hashes, dedups or corroborates, supersedes by key/subject, then indexes. Within `scope`: a
        client_id outside it is Forbidden, and a missing one is resolved among the scope's clients."""
        return self.store_many([draft], scope)[0]

    def store_many(self, drafts: Sequence[MemoryDraft],
                   scope: TenantScope = TenantScope.EVERYONE) -> list[StoreResult]:
        """`store` for a batch: one embedding call for all new texts, one index write for the batch.

        Each memory is still written in its own transaction, in order, so dedup and supersede behave
        exactly as for single writes. The embedding, the slow part, runs beside the work that needs no vector
        (entity extraction, the record writes, the entity registry) when the service has an `embed_executor`.
        The record store is the source of truth: an embedding that fails leaves the new records stored and
        pending for the repair sweep, as an index outage does.
        """
        memories = [self._new_memory(draft, scope) for draft in drafts]
        fresh = self._not_known_duplicates(memories)
        embedding = self._embed_beside(self.index_sync.embedding_texts(fresh))
        memories = [self._with_entities(memory) for memory in memories]
        outcomes = [self._store.create_or_corroborate(m, max_observers=self._max_observers) for m in memories]
        created = [o.memory for o in outcomes if o.kind is WriteKind.CREATED]
        self._link_entities(created)
        context = self.index_sync.new_context(created)
        superseded = [o.superseded for o in outcomes if o.kind is WriteKind.CREATED and o.superseded is not None]

        def index_them() -> bool:
            indexed = self._index_created(created, fresh, embedding, context)
            return self.index_sync.refresh_attributes(superseded) and indexed if superseded else indexed

        indexed = self._index_now_or_behind(bool(created), index_them)
        return [_store_result(outcome, indexed) for outcome in outcomes]

    def _not_known_duplicates(self, memories: Sequence[Memory]) -> list[Memory]:
        """The memories to embed: known duplicates are not (the store's transactions have the last word)."""
        return [m for m in memories
                if self._store.find_active_duplicate(m.client_id, m.type.value, m.content_hash) is None]

    def _index_now_or_behind(self, any_created: bool, index_them: Callable[[], bool]) -> bool:
        """Whether the new memories are indexed: the index write runs now, or is handed to the write-behind
        when there is one with room (stored and pending already, every index call waits for it: true)."""
        if any_created and self._write_behind is not None and self._write_behind.accepts():
            self._write_behind.submit(lambda: self._index_behind(index_them))
            return True
        return index_them()

    def _index_behind(self, index_them: Callable[[], bool]) -> None:
        """A write's index write, after its answer (which could not say it would fail). The client was told
        `stored_in.vector: true`, so what a failure leaves pending is repaired by the next write behind that
        succeeds, a batch at a time, rather than waiting for a restart or `zengram repair`."""
        if not index_them():
            self._behind_left_pending = True
        elif self._behind_left_pending:
            report = self.index_sync.repair(REPAIR_BEHIND_BATCH)
            self._behind_left_pending = report.stopped is not None or report.indexed + report.failed >= \
                REPAIR_BEHIND_BATCH

    def _embed_beside(self, texts: list[str]) -> Future[Vectors]:
        """The texts' vectors, computed on the `embed_executor` while the caller goes on (the embedder releases
        the GIL), or here and now without one. A failure is kept in the future for `_index_created`."""
        if texts and self._embed_executor is not None:
            return self._embed_executor.submit(self._embedder.embed, texts)
        done: Future[Vectors] = Future()
        try:
            done.set_result(self._embedder.embed(texts))
        except Exception as error:
            done.set_exception(error)
        return done

    def _index_created(self, created: Sequence[Memory], fresh: Sequence[Memory], embedding: Future[Vectors],
                       context: NewContext) -> bool:
        """Indexes the memories just created, with their `context` and the vectors of `fresh` (and, for one whose
        duplicate vanished meanwhile, a vector computed now). Returns whether the index took them; if not, they
        wait in the outbox."""
        try:
            vectors = dict(zip((m.id for m in fresh), embedding.result(), strict=True))
            late = [memory for memory in created if memory.id not in vectors]
            if late:
                vectors.update(zip((m.id for m in late), self._embedder.embed(self.index_sync.embedding_texts(late)),
                                   strict=True))
        except Exception as error:
            logger.warning("embedding failed; %d new record(s) left pending for the repair sweep: %s",
                           len(created), describe_error(error))
            return not created
        return self.index_sync.index_new_many([(memory, vectors[memory.id]) for memory in created], context)

    def _new_memory(self, draft: MemoryDraft, scope: TenantScope) -> Memory:
        """The memory a draft stores, scrubbed, its client resolved; its entities come with `_with_entities`."""
        if draft.client_id is not None and draft.client_id != GLOBAL_CLIENT:
            scope.require(draft.client_id)
        now = self._clock.now()
        content = self.scrubber.scrub(draft.content)
        client_id = self._client_of(draft, content, scope)
        return memory_from_draft(draft, self.scrubber, content=content, client_id=client_id, now=now)

    def _with_entities(self, memory: Memory) -> Memory:
        if self._entities is None:
            return memory
        entities = self._entities.extract(memory.content, memory.source_agent, memory.client_id)
        return memory.model_copy(update={"entities": entities}) if entities else memory

    def _client_of(self, draft: MemoryDraft, content: str, scope: TenantScope) -> str:
        """A given client_id is kept; a missing or "global" one is resolved from the content (semantics.md),
        among the scope's clients only, so a scoped key never writes into another tenant. When that leaves
        `global` and the scope does not include it, the scope's only client is taken (else a 400).
        Imports never come through here: they keep their records exactly."""
        if draft.resolved_client_id != GLOBAL_CLIENT:
            return draft.resolved_client_id
        resolved = self._resolve_client(content, scope.clients) if self._resolve_client else GLOBAL_CLIENT
        if scope.allows(resolved):
            return resolved
        if scope.clients is not None and len(scope.clients) == 1:
            return next(iter(scope.clients))
        raise InvalidInput("client_id", f"required: this API key writes to {len(scope.clients or ())} clients "
                                        f"({', '.join(scope.sorted_clients() or [])}) and not to '{GLOBAL_CLIENT}'")

    def update(self, memory_id: str, patch: MemoryPatch, *, expected_revision: int | None = None,
               scope: TenantScope = TenantScope.EVERYONE) -> UpdateResult:
        """PATCH. `expected_revision`: only if the memory is still at that revision, else StaleRevision (for a
        patch computed from an earlier read; see RecordStore.update)."""
        self._within(memory_id, scope)
        changes = MemoryChanges(
            importance=patch.importance,
            knowledge_category=patch.knowledge_category,
            metadata=self.scrubber.scrub_value(patch.metadata) if patch.metadata is not None else None,
        )
        if patch.content is not None:
            content = self.scrubber.scrub(patch.content)
            changes = changes.model_copy(update={"content": content, "content_hash": content_hash(content)})
            if self._entities is not None:  # new content, new entities (the memory's own agent is known)
                current = self.get(memory_id)
                entities = self._entities.extract(content, current.source_agent, current.client_id)
                changes = changes.model_copy(update={"entities": entities})
        updated = self._store.update(memory_id, changes, self._clock.now(), expected_revision=expected_revision)
        self.after_change([updated], relink=changes.entities is not None, content_changed=patch.content is not None)
        return UpdateResult(updated, changes.changed_fields())

    def delete(self, memory_id: str, *, by: str, reason: str | None,
               scope: TenantScope = TenantScope.EVERYONE) -> Memory:
        self._within(memory_id, scope)
        deleted = self._store.soft_delete(memory_id, by, self.scrubber.scrub_optional(reason), self._clock.now())
        self.after_change([deleted])  # a deleted memory no longer counts as a mention
        return deleted

    def after_change(self, memories: Sequence[Memory], *, relink: bool = True, content_changed: bool = False) -> bool:
        """The derived-data steps after a write changed existing records (PATCH, delete, consolidation's
        expiry): the entity registry brought in line with them (`relink`: needed whenever `entities` or the
        deletion state changed — a deleted memory is unlinked), then the search index (re-embedded when the
        content changed, else attributes only). Returns whether the index took the change (else the repair
        sweep will)."""
        if relink:
            self._link_entities(memories)
        if content_changed:
            return self.index_sync.refresh(memories)
        return self.index_sync.refresh_attributes(memories)

    def backfill_entities(self, on_progress: Callable[[int], None] | None = None) -> EntityBackfill:
        """Extracts entities for stored memories that have none (written before extraction existed, or imported
        without them), with the same write path as a PATCH: record first, then registry and index. A memory
        changed meanwhile is left for the next run; running it again is harmless."""
        report = EntityBackfill()
        if self._entities is None:
            return report
        for seen, memory in enumerate(self._store.iter_all(), start=1):
            if on_progress is not None:
                on_progress(seen)
            if memory.entities:
                continue
            entities = self._entities.extract(memory.content, memory.source_agent, memory.client_id)
            if not entities:
                report.none_found += 1
                continue
            try:
                updated = self._store.update(memory.id, MemoryChanges(entities=entities), self._clock.now(),
                                             expected_revision=memory.revision)
            except Conflict:  # changed since it was read (or no longer writable): the next run sees it afresh
                report.skipped += 1
                continue
            self.after_change([updated])
            report.updated += 1
        return report

    def restore(self, memory_id: str, scope: TenantScope = TenantScope.EVERYONE) -> list[Memory]:
        self._within(memory_id, scope)
        changed = self._store.restore(memory_id, self._clock.now())
        self.index_sync.refresh_attributes(changed)
        return changed

    def _link_entities(self, memories: Sequence[Memory]) -> None:
        """Brings the entity registry in line with these records. It is derived data, like the index: a
        failure is logged and the write still succeeds (the memory's own `entities` hold the truth)."""
        if self._entities is None:
            return
        for memory in memories:
            try:
                self._entities.link(memory)
            except Exception:
                logger.exception("entity registry update failed for memory %s", memory.id)

    def _entity_key(self, name: str) -> str:
        if self._entities is not None:
            return self._entities.resolve_key(name)
        return entity_key(canonical_entity_name(name))

    def reinforce(self, memory_ids: list[str]) -> None:
        """Counts each returned hit as an access (run after the response is sent); off by setting."""
        if not self._reinforce_on_search:
            return
        self._store.record_access(memory_ids, self._clock.now())

    # -- reads ----------------------------------------------------------------------------------------

    def get(self, memory_id: str, scope: TenantScope = TenantScope.EVERYONE) -> Memory:
        """The memory (Forbidden when it belongs to a client outside `scope`)."""
        memory = self._store.get(memory_id)
        if memory is None:
            raise MemoryNotFound(memory_id)
        return scope.require_memory(memory)

    @property
    def decay_factor(self) -> float:
        return self._scoring.decay_factor

    def history(self, memory_id: str, scope: TenantScope = TenantScope.EVERYONE) -> MemoryHistory:
        """The memory's supersede chain, timeline and confidence curve (domain/history.py). Reading it is not
        an access: it changes no counter."""
        memory = self.get(memory_id, scope)

        def linked(linked_id: str) -> Memory | None:
            found = self._store.get(linked_id)
            return found if found is not None and scope.allows(found.client_id) else None

        return history_of(memory, linked, self._clock.now(), self._scoring.decay_factor)

    def _within(self, memory_id: str, scope: TenantScope) -> None:
        """Before a change: the memory must be one `scope` may touch (a memory never changes client)."""
        if scope.is_restricted:
            self.get(memory_id, scope)

    def query(self, query: RecordQuery, scope: TenantScope = TenantScope.EVERYONE) -> list[Memory]:
        """The store's query, narrowed to `scope`: its asked client_id must be in it, none means all of its own.
        Keys and subjects are stored scrubbed, so they are looked up scrubbed: a lookup by the key as it was
        written finds the memory (the same secret always gets the same placeholder)."""
        tenants, scrub = scope.narrow(query.client_id), self.scrubber.scrub_optional
        return self._store.query(query.model_copy(update={
            "client_id": tenants.client_id, "client_ids": tenants.client_ids,
            "key": scrub(query.key), "subject": scrub(query.subject)}))

    def search(self, request: SearchRequest, scope: TenantScope = TenantScope.EVERYONE) -> SearchResult:
        """`search_once`; when it finds nothing, once more with the query's key terms (as upstream Zengram does),
        the result then naming the `expanded_query`."""
        result = self.search_once(request, scope)
        if result.hits:
            return result
        terms = key_terms(request.q)
        if not terms or terms == request.q:
            return result
        retried = self.search_once(request.model_copy(update={"q": terms}), scope)
        return replace(retried, query=request.q, expanded_query=terms)

    def search_once(self, request: SearchRequest, scope: TenantScope = TenantScope.EVERYONE) -> SearchResult:
        """Vector and keyword paths (and the graph path, when on) in parallel, fused (`ScoringConfig.fusion`),
        ranked by `effective_score`, then re-ranked when a re-ranker is on; only memories of `scope`'s clients
        (the index filters, the record store has the last word). The steps: services/search.py; the extras:
        docs/retrieval-extras.md."""
        entity_key = self._entity_key(request.entity) if request.entity is not None else None
        return self._search.once(request, scope, entity_key)


def _store_result(outcome: WriteOutcome, indexed: bool) -> StoreResult:
    """A write's result: a created memory's says whether it is indexed, and warns of a missing key or subject."""
    if outcome.kind is WriteKind.CREATED:
        return StoreResult(outcome.kind, outcome.memory, outcome.superseded, indexed, _warnings(outcome.memory))
    return StoreResult(outcome.kind, outcome.memory)


def _warnings(memory: Memory) -> list[str]:
    if memory.type is MemoryType.FACT and memory.key is None:
        return ["Fact stored without key — cannot be superseded. Provide a key for long-term memory hygiene."]
    if memory.type is MemoryType.STATUS and memory.subject is None:
        return ["status stored without a subject: it will never be superseded; give a subject to upsert"]
    return []
