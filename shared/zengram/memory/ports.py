"""The memory context's ports (the shared ones, Clock, Embedder, SearchIndex, LanguageModel, are in
`zengram.kernel.ports`): what the services need from the outside world, with the contract every adapter keeps.

Each adapter of a port runs the same contract suite in `tests/contract/`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from zengram.kernel.keys import ApiKey
from zengram.kernel.outbox import IndexAttempts, ParkedRecord
from zengram.memory.domain.clients import ClientFingerprint
from zengram.memory.domain.collections import Collection
from zengram.memory.domain.context import Neighbours
from zengram.memory.domain.entities import EntityRecord, EntityRef, EntityStats, EntityType, RelatedEntity
from zengram.memory.domain.jobs import Job, LockState
from zengram.memory.domain.models import Importance, ImportOutcome, Memory, MemoryChanges, RecordQuery, WriteOutcome
from zengram.memory.domain.research import ResearchState
from zengram.memory.domain.stats import RecordStats

# -- the record backend: four ports, one adapter per backend ------------------------------------------------
# A record backend (SQLite, DynamoDB) implements the four ports below in one adapter, because their writes share
# one transaction: a memory's change, its index-outbox mark and the counters it moves commit together.
# Services ask for the ports they use; each port has its contract suite in tests/contract/.


@runtime_checkable
class RecordStore(Protocol):
    """The source of truth for memories: records, their writes and queries (tests/contract/test_record_store.py).

    Every write runs a domain transition (`zengram.memory.domain.lifecycle`, the `Memory` methods) over what it reads
    inside its atomic write, and persists the changes it returns, whole or not at all: the rules (dedup,
    corroboration, supersede by key/subject, restore, the errors) are the domain's, never the adapter's.

    Contract:
    - `create_or_corroborate` is atomic, as `lifecycle.create` decides. Among *active* memories with the same
      `(client_id, type, content_hash)`: none → the memory is inserted (kind CREATED); one from the same
      `source_agent` (or one already observed by it) → nothing changes (DEDUPLICATED); one from another
      agent → that agent is appended to `observed_by` (at most `max_observers` names),
      `observation_count` grows by one and `last_observed_at` is set (CORROBORATED).
      On CREATED, a fact with a `key` (or a status with a `subject`) supersedes the active memory of the
      same type and key/subject in the same `client_id` in the same transaction: the old one gets
      `active=False`, `superseded_by`, `superseded_at=valid_to=now`; the new one `supersedes`.
      Under any number of concurrent callers: one memory per hash, at most one active per key/subject.
    - Every write bumps `revision` and marks the memories it touched as awaiting indexing in the same
      transaction (the `IndexOutbox` contract), and moves the counters `RecordCounters` reads in it too.
      Corroboration and access counting touch no indexed field and mark nothing.
    - `record_access` adds exactly one to `access_count` per id occurrence and sets `last_accessed_at`,
      without losing increments under concurrent callers.
    - `query` returns newest first (`created_at` descending, then id), or oldest first (ascending, then id)
      with `oldest_first`; deleted memories only with `include_deleted`, inactive ones only with
      `include_inactive`. `client_ids` (a tenant scope) keeps memories of those clients only, in the same order,
      together with every other filter (`client_id` included).
    - `iter_all` yields every memory (deleted ones only with `include_deleted`) oldest first, lazily; with
      `client_ids`, only those clients' memories.
    - `thread_neighbours(memory, before=, after=)` returns the live events (active, not deleted, type event) of
      `memory`'s thread (same `client_id` and `source_agent`) nearest to it in stored order (`created_at` as
      stored, to the millisecond, then id): at most `before` that sort before `memory` and at most `after` that
      sort after it, each list oldest first; `memory` itself (which need not be stored) is never among them.
      Bounded work whatever the thread's length: one indexed read of at most `before` items and one of at
      most `after` (DynamoDB: a sparse GSI, eventually consistent like every GSI read).
    - `import_memory` writes a memory exactly as given (its id, every field, `revision` included) and marks
      it awaiting indexing, atomically, or changes nothing, as `lifecycle.import_outcome` decides: an existing
      id → DUPLICATE_ID; for an *active* memory, another active memory with the same
      `(client_id, type, content_hash)` → DUPLICATE_CONTENT, or with the same fact key / status subject in the
      same `client_id` → LABEL_HELD (nothing is superseded); `existing_id` names the memory in the way. An
      inactive memory (superseded or deleted) never clashes with anything but its id.
    - Reads never return a half-written memory.
    """

    def create_or_corroborate(self, memory: Memory, *, max_observers: int) -> WriteOutcome: ...

    def import_memory(self, memory: Memory) -> ImportOutcome: ...

    def get(self, memory_id: str) -> Memory | None: ...

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, Memory]: ...

    def find_active_duplicate(self, client_id: str, type_: str, content_hash: str) -> Memory | None: ...

    def update(self, memory_id: str, changes: MemoryChanges, at: datetime, *,
               expected_revision: int | None = None) -> Memory:
        """Applies `changes` (`lifecycle.update`); raises NotFound, or Conflict when new content duplicates an
        active memory. With `expected_revision` (optimistic concurrency, for changes computed from an earlier read,
        e.g. a merged `metadata`): applied only if the memory is still at that revision, checked in the same atomic
        write; otherwise raises StaleRevision (a Conflict) and changes nothing, so the caller re-reads and
        re-applies its change."""
        ...

    def soft_delete(self, memory_id: str, by: str, reason: str | None, at: datetime) -> Memory:
        """`Memory.soft_deleted`: active=False and deleted_*; idempotent on an already deleted memory. Raises
        NotFound."""
        ...

    def restore(self, memory_id: str, at: datetime) -> list[Memory]:
        """`lifecycle.restore`: makes a superseded memory active again, atomically superseding whichever memory now
        holds its key/subject. Returns every memory changed (the restored one first; an active one alone,
        unchanged). Raises NotFound, or Conflict for a deleted memory or one whose content is active elsewhere."""
        ...

    def record_access(self, memory_ids: Sequence[str], at: datetime) -> None: ...

    def query(self, query: RecordQuery) -> list[Memory]: ...

    def thread_neighbours(self, memory: Memory, *, before: int, after: int) -> Neighbours: ...

    def iter_all(self, *, include_deleted: bool = False, batch_size: int = 500,
                 client_ids: Sequence[str] | None = None) -> Iterator[Memory]: ...

    def count(self) -> int: ...


@runtime_checkable
class IndexOutbox(Protocol):
    """The record store's queue of changes still to reach the search index (kept with the records, so a write and
    its pending mark are one transaction) (tests/contract/test_index_outbox.py).

    Contract:
    - Every write that changes an indexed field marks the memory pending at its new revision, queued at its
      `updated_at`, with no failed attempts (a new revision starts afresh, even a parked one).
    - `pending_index(limit)` lists pending memories (deleted ones included, parked ones not), oldest queued first.
    - `mark_indexed(revisions)` clears the mark (pending or parked, attempts and error too) of each memory still at
      `revision == revisions[id]`, so a change that raced the indexing stays pending.
    - `record_index_failure(id, revision, error, at, park_after)` counts one failed attempt at a memory still at
      that revision and not parked (else it changes nothing and returns None): it is pending afterwards (also
      one that was indexed, e.g. refused by a rebuild), keeps `error` as its last error, and is queued again at
      `at` (behind what was queued before, so one failing record never holds up the rest).
      When the attempts reach `park_after` (None: never) the memory is parked: out of `pending_index`, listed by
      `parked_index`. Returns the attempts counted so far and whether it is now parked.
    - `parked_index(limit)` lists parked memories, oldest parked first.
    - `requeue_parked(at)` makes every parked memory pending again (queued at `at`, attempts reset) and returns
      how many; `RecordCounters.stats` counts pending and parked memories apart.
    """

    def pending_index(self, limit: int) -> list[Memory]: ...

    def mark_indexed(self, revisions: dict[str, int]) -> None: ...

    def record_index_failure(self, memory_id: str, revision: int, error: str, at: datetime,
                             park_after: int | None) -> IndexAttempts | None: ...

    def parked_index(self, limit: int) -> list[ParkedRecord]: ...

    def requeue_parked(self, at: datetime) -> int: ...


@runtime_checkable
class RecordCounters(Protocol):
    """Counts over the whole record store, kept as the records change (tests/contract/test_record_counters.py).

    Contract:
    - `stats(now, decay_factor)` gives the counts `RecordStats` defines; `decayed_below_50pct` uses
      `zengram.memory.domain.scoring.effective_confidence(memory, now, decay_factor)`; `pending_index` and
      `parked_index`
      count the outbox (`IndexOutbox`).
    - Exact: once writes have returned, the numbers equal a recount of the records, whatever the number
      of concurrent writers (counters move in the same transaction as the records they count).
    - Cheap: on DynamoDB no read grows with the store (sharded counter items, and Select=COUNT over sparse GSIs,
      which are eventually consistent: a count may lag a just-finished write by the GSI's delay).
    """

    def stats(self, now: datetime, decay_factor: float) -> RecordStats: ...


@runtime_checkable
class ConsolidationWrites(Protocol):
    """Consolidation's reads and bulk writes over the records (tests/contract/test_consolidation_writes.py).

    Contract: each write bumps `revision`, sets `updated_at = at`, marks what it changed pending and moves the
    counters, like every write (`RecordStore`); each returns the memories it changed, as the `Memory` transition
    named below returned them (None from it: the memory is left alone).
    - `unconsolidated(limit)`: active memories not yet consolidated, oldest first (`created_at`, then id), at most
      `limit`.
    - `mark_consolidated(ids, at)`: `Memory.marked_consolidated` on each listed memory that exists.
    - `supersede_by(ids, superseded_by, at)`: consolidation's merge, `Memory.merged_into` on each listed memory
      that exists; an active one gives up its content and key/subject slots. Each memory changes atomically
      (SQLite: the whole call is one transaction; DynamoDB: one transaction per 25 memories).
    - `expire_events(created_before, importances, by, reason, at, limit)`: `Memory.expired` on at most `limit`
      active events created before `created_before` with one of `importances` and `access_count == 0`, oldest
      first. The count is checked in the same atomic write, so a memory accessed meanwhile is kept.
    """

    def unconsolidated(self, limit: int) -> list[Memory]: ...

    def mark_consolidated(self, memory_ids: Sequence[str], at: datetime) -> list[Memory]: ...

    def supersede_by(self, memory_ids: Sequence[str], superseded_by: str, at: datetime) -> list[Memory]: ...

    def expire_events(self, created_before: datetime, importances: Sequence[Importance], by: str, reason: str,
                      at: datetime, limit: int) -> list[Memory]: ...


@runtime_checkable
class ClientStore(Protocol):
    """Client fingerprints, kept in the record store's backend (a table in SQLite, items in DynamoDB).

    Contract:
    - `put` creates or replaces the fingerprint of `client_id` and returns what is stored (revision bumped
      on replace, `created_at` kept); `get` of an unknown id is None; `delete` returns whether one existed.
    - `list_all` returns every fingerprint ordered by `client_id`.
    """

    def put(self, fingerprint: ClientFingerprint) -> ClientFingerprint: ...

    def get(self, client_id: str) -> ClientFingerprint | None: ...

    def delete(self, client_id: str) -> bool: ...

    def list_all(self) -> list[ClientFingerprint]: ...


@runtime_checkable
class CollectionStore(Protocol):
    """The collection registry (`zengram.memory.domain.collections`), kept in the record store's backend.

    Contract:
    - `create` registers a collection and returns True; a name already registered is left as it is (False).
    - `get` of an unknown name is None; `delete` returns whether one was registered.
    - `list_all` returns every registered collection ordered by name.
    """

    def create(self, collection: Collection) -> bool: ...

    def get(self, name: str) -> Collection | None: ...

    def delete(self, name: str) -> bool: ...

    def list_all(self) -> list[Collection]: ...


@runtime_checkable
class ApiKeyStore(Protocol):
    """Scoped API keys (`zengram.kernel.keys.ApiKey`: salted hashes, never the keys), kept in the record store's
    backend (an `api_keys` table in SQLite, `KEYS` items in DynamoDB).

    Contract:
    - `create(key)` stores a new record; a record with the same id already there raises `Conflict` and is left
      as it was. Every field reads back as written.
    - `get(key_id)` is one strongly consistent read: a record created or revoked before the call is seen as such;
      an unknown id is None.
    - `list_all` returns every record, revoked ones included, oldest first (`created_at`, then id).
    - `revoke(key_id, at)` sets `revoked_at` once and returns the record; revoking again keeps the first
      `revoked_at`; an unknown id is None (and creates nothing).
    """

    def create(self, key: ApiKey) -> None: ...

    def get(self, key_id: str) -> ApiKey | None: ...

    def list_all(self) -> list[ApiKey]: ...

    def revoke(self, key_id: str, at: datetime) -> ApiKey | None: ...


@runtime_checkable
class JobStore(Protocol):
    """Background job records and named locks, kept in the record store's backend (a table in SQLite,
    items in DynamoDB).

    Contract:
    - `put` creates or replaces a job by id; `get` of an unknown id is None. `last_finished(kind)` is the job
      of that kind with the latest `finished_at` (None before any finished).
    - `acquire(name, owner, ttl_seconds, now)` takes the lock and returns True when it is free, expired
      (`expires_at <= now`) or already held by `owner` (which extends it to `now + ttl_seconds`); otherwise
      it changes nothing and returns False. Among concurrent callers for a free lock exactly one wins.
    - `release(name, owner)` frees the lock only if `owner` holds it (a late release after an expiry and a
      take-over by another owner must not free the new holder's lock).
    - `claim(job_id, started_at)` moves a `queued` job to `running` (setting `started_at`) in one conditional
      write and returns the running job; a job that is not queued (already claimed, finished, or unknown) is
      left as it is and the answer is None. Among concurrent claims of one queued job exactly one wins, so a
      job delivered twice (Lambda async invocations are at-least-once) runs once.
    - `read_lock(name)` is the current holder as stored, expired or not (None when free).
    """

    def put(self, job: Job) -> None: ...

    def get(self, job_id: str) -> Job | None: ...

    def last_finished(self, kind: str) -> Job | None: ...

    def acquire(self, name: str, owner: str, ttl_seconds: float, now: datetime) -> bool: ...

    def release(self, name: str, owner: str) -> None: ...

    def read_lock(self, name: str) -> LockState | None: ...

    def claim(self, job_id: str, started_at: datetime) -> Job | None: ...


@runtime_checkable
class ResearchRunner(Protocol):
    """Drives the research loop (semantics.md) over the shared steps: Retrieve, Judge, then Retrieve again or
    Synthesize, as `zengram.memory.domain.research.loop_is_done` decides.

    Contract:
    - `run(state)` takes the start state and returns the state after Synthesize (`result` set). Given the same
      memories and the same LLM answers, every runner returns the same state (in process or Step Functions).
    - A step's domain error reaches the caller as the same `ZengramError` subclass (e.g. `LLMInvalidResponse`,
      `LLMUnavailable`); a failure of the machinery itself raises `ResearchFailed`.
    """

    def run(self, state: ResearchState) -> ResearchState: ...


@runtime_checkable
class EntityStore(Protocol):
    """The entity registry: entities, which memories mention them, and co-occurrence edges.

    Entities are addressed by key (`zengram.memory.domain.entities.entity_key` of the canonical name).
    Contract:
    - `set_mentions(memory_id, ...)` makes the registry hold exactly `entities` for that memory: entities new to
      the registry are created with the given name and type (an existing one keeps its own); each entity's
      `mention_count` is the number of memories linked to it; `first_seen`/`last_seen` span the `seen_at` of its
      mentions; the edge between two entities has `strength` = the number of memories linked to both (0-strength
      edges are not reported). Calling it again with the same set changes nothing; an empty set unlinks the
      memory. Under concurrent callers no increment is lost.
    - `list_entities` orders by `mention_count` descending, then key; `memory_ids` newest memory first
      (`memory_created_at` descending, then id descending); `related` by strength descending, then name.
    - `iter_memory_ids(key, page_size)` yields the same ids in the same order, lazily: links are read
      `page_size` at a time, a page only once the ids before it have been taken, so a caller that stops early
      (a popular entity's partition can hold millions of links) reads no further. The sign of it: a link made
      mid-iteration that sorts after the last page read is still yielded (on DynamoDB once its eventually
      consistent reads see it).
    - `stats` counts every registered entity, by type, and names the `top` most mentioned.
    - `set_type` changes the registered type (None for an unknown key).
    - `remove_unlinked(key)` removes an entity no memory is linked to any more (from the listing and the stats'
      counts) and returns True; an entity still linked (a memory named it meanwhile) or unknown stays as it is
      (False). A memory naming it later registers it anew.
    """

    def set_mentions(self, memory_id: str, memory_created_at: datetime, entities: Sequence[EntityRef],
                     seen_at: datetime) -> None: ...

    def get(self, key: str) -> EntityRecord | None: ...

    def get_many(self, keys: Sequence[str]) -> dict[str, EntityRecord]: ...

    def list_entities(self, type_: EntityType | None, limit: int, offset: int) -> list[EntityRecord]: ...

    def related(self, key: str, limit: int) -> list[RelatedEntity]: ...

    def memory_ids(self, key: str, limit: int | None = None) -> list[str]: ...

    def iter_memory_ids(self, key: str, page_size: int = 100) -> Iterator[str]: ...

    def stats(self, top: int = 10) -> EntityStats: ...

    def set_type(self, key: str, new_type: EntityType) -> EntityRecord | None: ...

    def remove_unlinked(self, key: str) -> bool: ...


@runtime_checkable
class JobLauncher(Protocol):
    """Starts a recorded job somewhere that outlives the request which asked for it.

    Contract:
    - `launch(job_id, run_here)` returns at once; the job then runs exactly once, either by calling
      `run_here(job_id)` on a thread of this process, or in another process that runs it by id.
    - When the job cannot be started it raises (and nothing will run it).
    """

    def launch(self, job_id: str, run_here: Callable[[str], object]) -> None: ...


@runtime_checkable
class Reranker(Protocol):
    """Scores how well each document answers a query, reading both together (a cross-encoder behind a
    Cohere/Jina/TEI-compatible `/rerank` endpoint, or a test scorer).

    Contract:
    - `rerank(query, documents)` returns position in `documents` → score, higher meaning more relevant (a
      probability in [0, 1] or a raw logit); a document it did not score is left out, never guessed.
    - Any failure (unreachable, timeout, an error status, an answer it cannot read) raises; the caller then
      keeps its own order. It never returns positions outside `documents`.
    - `describe()` names the provider for logs (never a key); `close()` releases its connections.
    """

    def rerank(self, query: str, documents: Sequence[str]) -> dict[int, float]: ...

    def describe(self) -> str: ...

    def close(self) -> None: ...
