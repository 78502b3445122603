"""The AWS `RecordStore`: one DynamoDB table of memories plus uniqueness guards (see infra/README.md).

Where SQLite has partial unique indexes, this store has guard items: `HASH#<client>#<type>#<hash>` is held by
the one active memory with that content, `KEY#<client>#<key>` by the active fact with that key and
`SUBJECT#<client>#<subject>` by the active status with that subject. Every write reads what it depends on,
then commits memory and guards in one `TransactWriteItems` whose conditions say "nothing I read has
changed"; when another writer got there first the transaction is cancelled whole, and the write starts
over from a fresh read (a bounded number of times).
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import itertools
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from zengram.adapters.dynamodb import writes
from zengram.adapters.dynamodb.items import (
    CONFIDENCE_SET,
    DECAY_SHARDS,
    GUARD_TARGET,
    INDEX_ATTEMPTS,
    INDEX_ERROR,
    MEMORY_KIND,
    PARKED_MARK,
    PENDING_MARK,
    STATS_KIND,
    STATS_SHARDS,
    Item,
    confidence_key,
    content_guard_key,
    created_sort_key,
    decay_partition,
    encode,
    hash_guard_key,
    is_parked,
    is_pending,
    label_guard_key,
    memory_from_item,
    memory_key,
    queued_at,
    stats_shard_key,
    string,
    thread_partition,
    timestamp,
)
from zengram.adapters.dynamodb.schema import (
    ALL_PK,
    BY_CLIENT,
    BY_CREATED,
    BY_THREAD,
    CLIENT_PK,
    CREATED_SK,
    DECAY_INDEX,
    DECAY_PK,
    DECAY_SK,
    PENDING_INDEX,
    PENDING_PK,
    PK,
    SK,
    THREAD_PK,
    ensure_table,
)
from zengram.adapters.dynamodb.table import DynamoTable, WriteConflict, make_client
from zengram.adapters.dynamodb.writes import Expression, WriteOp
from zengram.kernel.errors import Conflict
from zengram.kernel.outbox import MAX_ERROR_CHARS, IndexAttempts, ParkedRecord
from zengram.memory.domain import lifecycle
from zengram.memory.domain.context import Neighbours
from zengram.memory.domain.lifecycle import Change
from zengram.memory.domain.models import (
    Importance,
    ImportKind,
    ImportOutcome,
    Memory,
    MemoryChanges,
    RecordQuery,
    WriteKind,
    WriteOutcome,
)
from zengram.memory.domain.stats import RecordStats, decayed_before, decays, stats_from_counters, tally_change

T = TypeVar("T")

# Each lost race means another writer succeeded. With full-jitter backoff (20 ms doubling up to 1 s), 50 writers
# racing for one fact key needed at most ~15 attempts each; 25 keeps the worst case inside a Lambda timeout.
MAX_ATTEMPTS = 25
_BACKOFF_BASE_SECONDS = 0.02
_BACKOFF_CAP_SECONDS = 1.0
_QUERY_PAGE = 100
# Memories per consolidation transaction: each takes up to 3 actions (memory, 2 guards) of the 100 allowed.
_REVISE_CHUNK = 25
_ZERO = {"N": "0"}
_FILTERED_FIELDS = ("type", "source_agent", "category", "key", "subject")


class DynamoDBRecordStore:
    """Source of truth for the AWS host. Thread-safe: the boto3 client is, and the store keeps no state."""

    def __init__(
        self,
        table_name: str,
        *,
        region: str | None = None,
        endpoint_url: str | None = None,
        client: Any | None = None,
    ) -> None:
        self._table = DynamoTable(client or make_client(region=region, endpoint_url=endpoint_url), table_name)

    @property
    def client(self) -> Any:
        """The boto3 DynamoDB client in use."""
        return self._table.client

    @property
    def table_name(self) -> str:
        return self._table.name

    def ensure_table(self) -> None:
        """Creates the table if it does not exist (tests, "bring your own table"); in production SAM does."""
        ensure_table(self._table.client, self._table.name)

    def close(self) -> None:
        self._table.client.close()

    # -- writes ---------------------------------------------------------------------------------------

    def create_or_corroborate(self, memory: Memory, *, max_observers: int) -> WriteOutcome:
        return self._retrying(lambda: self._create_or_corroborate_once(memory, max_observers), f"store {memory.id}")

    def import_memory(self, memory: Memory) -> ImportOutcome:
        return self._retrying(lambda: self._import_once(memory), f"import {memory.id}")

    def update(self, memory_id: str, changes: MemoryChanges, at: datetime, *,
               expected_revision: int | None = None) -> Memory:
        return self._retrying(lambda: self._update_once(memory_id, changes, at, expected_revision),
                              f"update {memory_id}")

    def soft_delete(self, memory_id: str, by: str, reason: str | None, at: datetime) -> Memory:
        return self._retrying(lambda: self._soft_delete_once(memory_id, by, reason, at), f"delete {memory_id}")

    def restore(self, memory_id: str, at: datetime) -> list[Memory]:
        return self._retrying(lambda: self._restore_once(memory_id, at), f"restore {memory_id}")

    def record_access(self, memory_ids: Sequence[str], at: datetime) -> None:
        for memory_id, count in Counter(memory_ids).items():
            try:
                self._table.write([writes.count_access(memory_id, count, at)])
            except WriteConflict:  # a later access is already stamped (or the id is unknown): just count
                self._ignoring_conflict([writes.count_access(memory_id, count, None)])

    # -- the index outbox: the sparse pending-index GSI, partition PENDING (the queue) or PARKED --------------

    def mark_indexed(self, revisions: dict[str, int]) -> None:
        for memory_id, revision in revisions.items():
            self._ignoring_conflict([writes.clear_pending(memory_id, revision)])  # changed again: stays pending

    def record_index_failure(self, memory_id: str, revision: int, error: str, at: datetime,
                             park_after: int | None) -> IndexAttempts | None:
        try:
            item = self._table.update_returning(
                writes.count_index_failure(memory_id, revision, error[:MAX_ERROR_CHARS], at))
        except WriteConflict:  # changed, indexed or parked meanwhile: this failure is about an old state
            return None
        attempts = int(item[INDEX_ATTEMPTS]["N"])
        if park_after is None or attempts < park_after:
            return IndexAttempts(attempts=attempts, parked=False)
        try:
            self._table.write([writes.park(memory_id, revision, attempts)])
        except WriteConflict:  # changed or counted again since: the newer state decides
            return IndexAttempts(attempts=attempts, parked=False)
        return IndexAttempts(attempts=attempts, parked=True)

    def parked_index(self, limit: int) -> list[ParkedRecord]:
        items = [item for item in self._outbox_items(PARKED_MARK, limit) if is_parked(item)]
        return [ParkedRecord(memory_id=memory.id, revision=memory.revision,
                             attempts=int(item.get(INDEX_ATTEMPTS, {"N": "0"})["N"]),
                             last_error=item.get(INDEX_ERROR, {"S": ""})["S"], parked_at=queued_at(item))
                for item, memory in ((item, memory_from_item(item)) for item in items)]

    def requeue_parked(self, at: datetime) -> int:
        requeued = 0
        for key in self._outbox_keys(PARKED_MARK, None):
            try:
                self._table.write([writes.requeue(key[PK]["S"].removeprefix(f"{MEMORY_KIND}#"), at)])
            except WriteConflict:  # indexed, changed or requeued meanwhile
                continue
            requeued += 1
        return requeued

    def _outbox_keys(self, mark: str, limit: int | None) -> list[Item]:
        """Table keys of the outbox partition `mark`, oldest queued first (the GSI is eventually consistent)."""
        expression = Expression()
        condition = expression.equals(PENDING_PK, string(mark))
        params = {"IndexName": PENDING_INDEX, **expression.params(KeyConditionExpression=condition)}
        page = max(limit, 1) if limit is not None else _QUERY_PAGE
        entries = self._table.query(params, page_size=page)
        return [{PK: entry[PK], SK: entry[SK]} for entry in itertools.islice(entries, limit)]

    def _outbox_items(self, mark: str, limit: int) -> list[Item]:
        """The items themselves, read strongly consistent, in queue order (gone ones left out)."""
        keys = self._outbox_keys(mark, max(limit, 0))
        fresh = {item[PK]["S"]: item for item in self._table.get_many(keys)}
        return [fresh[key[PK]["S"]] for key in keys if key[PK]["S"] in fresh]

    # -- consolidation's writes -----------------------------------------------------------------------

    def unconsolidated(self, limit: int) -> list[Memory]:
        """Reads by-created oldest first with a filter: its cost grows with the store (one pass per run)."""
        if limit <= 0:
            return []
        expression = Expression()
        condition = expression.equals(ALL_PK, string(MEMORY_KIND))
        filters = " AND ".join([expression.equals("active", {"BOOL": True}),
                                expression.equals("consolidated", {"BOOL": False}), _not_deleted(expression)])
        params = {"IndexName": BY_CREATED, "ScanIndexForward": True,
                  **expression.params(KeyConditionExpression=condition, FilterExpression=filters)}
        items = itertools.islice(self._table.query(params, page_size=max(limit, _QUERY_PAGE)), limit)
        return [memory_from_item(item) for item in items]

    def mark_consolidated(self, memory_ids: Sequence[str], at: datetime) -> list[Memory]:
        return self._revise_in_chunks(memory_ids, lambda memory: memory.marked_consolidated(at), "mark consolidated")

    def supersede_by(self, memory_ids: Sequence[str], superseded_by: str, at: datetime) -> list[Memory]:
        return self._revise_in_chunks(memory_ids, lambda memory: memory.merged_into(superseded_by, at),
                                      f"supersede by {superseded_by}")

    def expire_events(self, created_before: datetime, importances: Sequence[Importance], by: str, reason: str,
                      at: datetime, limit: int) -> list[Memory]:
        levels = {Importance(level) for level in importances}
        if not levels or limit <= 0:
            return []
        # Chunks of memories per transaction; an access racing a chunk cancels it, and the retry re-reads it (an
        # access, a supersede or a delete since the listing keeps the memory: `Memory.expired` says None).
        candidates = [candidate.id for candidate in self._expiry_candidates(created_before, levels, limit)]
        return self._revise_in_chunks(candidates, lambda memory: memory.expired(by, reason, at), "expire events",
                                      unaccessed=True)

    def _expiry_candidates(self, created_before: datetime, levels: set[Importance], limit: int) -> list[Memory]:
        expression = Expression()
        condition = (f"{expression.equals(ALL_PK, string(MEMORY_KIND))} AND "
                     f"{expression.name(CREATED_SK)} < {expression.value(timestamp(created_before))}")
        importance = expression.name("importance")
        filters = " AND ".join([
            expression.equals("type", string("event")), expression.equals("active", {"BOOL": True}),
            expression.equals("access_count", _ZERO), _not_deleted(expression),
            f"{importance} IN ({', '.join(expression.value(string(level.value)) for level in sorted(levels))})",
        ])
        params = {"IndexName": BY_CREATED, "ScanIndexForward": True,
                  **expression.params(KeyConditionExpression=condition, FilterExpression=filters)}
        return [memory_from_item(item) for item in itertools.islice(self._table.query(params, page_size=100), limit)]

    def _revise_in_chunks(self, memory_ids: Sequence[str], change: Callable[[Memory], Memory | None], action: str,
                          *, unaccessed: bool = False) -> list[Memory]:
        """Applies `change` to each memory (None: leave it), one transaction per chunk of memories: each revise
        is conditioned on the revision read, and a memory leaving the active set gives up its guards."""
        changed: list[Memory] = []
        unique = list(dict.fromkeys(memory_ids))
        for start in range(0, len(unique), _REVISE_CHUNK):
            chunk = unique[start:start + _REVISE_CHUNK]
            changed += self._retrying(functools.partial(self._revise_once, chunk, change, unaccessed), action)
        return changed

    def _revise_once(self, memory_ids: Sequence[str], change: Callable[[Memory], Memory | None],
                     unaccessed: bool) -> list[Memory]:
        changes = [Change(current, revised) for current in self.get_many(memory_ids).values()
                   if (revised := change(current)) is not None]
        self._persist(changes, _Reads(self), condition=_only_if_unaccessed if unaccessed else None)
        return [change.after for change in changes]

    # -- reads ----------------------------------------------------------------------------------------

    def get(self, memory_id: str) -> Memory | None:
        item = self._table.get(memory_key(memory_id))
        return memory_from_item(item) if item is not None else None

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, Memory]:
        items = self._table.get_many([memory_key(memory_id) for memory_id in dict.fromkeys(memory_ids)])
        return {memory.id: memory for memory in map(memory_from_item, items)}

    def find_active_duplicate(self, client_id: str, type_: str, content_hash: str) -> Memory | None:
        return self._read_guards([hash_guard_key(client_id, type_, content_hash)])[0].holder

    def query(self, query: RecordQuery) -> list[Memory]:
        wanted = query.offset + query.limit
        if wanted <= 0:
            return []
        items = itertools.islice(self._listed(query, page_size=max(wanted, _QUERY_PAGE)), wanted)
        return [memory_from_item(item) for item in items][query.offset:]

    def thread_neighbours(self, memory: Memory, *, before: int, after: int) -> Neighbours:
        """Two small Queries of the sparse by-thread GSI (live events only), each side from `memory`'s position."""
        previous = self._thread_side(memory, before, forward=False)
        return Neighbours(previous=previous[::-1], following=self._thread_side(memory, after, forward=True))

    def _thread_side(self, memory: Memory, count: int, *, forward: bool) -> list[Memory]:
        if count <= 0:
            return []
        expression = Expression()
        condition = (f"{expression.equals(THREAD_PK, thread_partition(memory.client_id, memory.source_agent))} "
                     f"AND {expression.name(CREATED_SK)} {'>' if forward else '<'} "
                     f"{expression.value(created_sort_key(memory))}")
        params = {"IndexName": BY_THREAD, "ScanIndexForward": forward,
                  **expression.params(KeyConditionExpression=condition)}
        found = map(memory_from_item, itertools.islice(self._table.query(params, page_size=count), count))
        # The GSI may lag a just-committed delete or deactivation by a moment: such an item is left out.
        return [memory for memory in found if memory.active and not memory.is_deleted]

    def iter_all(self, *, include_deleted: bool = False, batch_size: int = 500,
                 client_ids: Sequence[str] | None = None) -> Iterator[Memory]:
        if client_ids is not None:
            scope = RecordQuery(client_ids=tuple(client_ids), include_inactive=True, include_deleted=include_deleted,
                                oldest_first=True)
            return map(memory_from_item, self._listed(scope, page_size=batch_size))
        expression = Expression()
        condition = expression.equals(ALL_PK, string(MEMORY_KIND))
        filters = {} if include_deleted else {"FilterExpression": _not_deleted(expression)}
        params = {"IndexName": BY_CREATED, **expression.params(KeyConditionExpression=condition, **filters)}
        return map(memory_from_item, self._table.query(params, page_size=batch_size))

    def _listed(self, query: RecordQuery, *, page_size: int) -> Iterator[Item]:
        """The items `query` lists, lazily, in its order. A tenant scope (`client_ids`) reads each client's
        partition of by-client and merges them by `created_sk` (created_at, then id), as one partition sorts."""
        if query.client_ids is None:
            return self._table.query(_listing(query), page_size=page_size)
        clients = sorted(set(query.client_ids))
        if query.client_id is not None:
            clients = [query.client_id] if query.client_id in clients else []
        streams = [self._table.query(_listing(query.model_copy(update={"client_id": client, "client_ids": None})),
                                     page_size=page_size) for client in clients]
        return heapq.merge(*streams, key=lambda item: str(item[CREATED_SK]["S"]), reverse=not query.oldest_first)

    def pending_index(self, limit: int) -> list[Memory]:
        # The GSI is eventually consistent: keep only what a strongly consistent read still finds pending.
        return [memory_from_item(item) for item in self._outbox_items(PENDING_MARK, limit) if is_pending(item)]

    def count(self) -> int:
        expression = Expression()
        condition = expression.equals(ALL_PK, string(MEMORY_KIND))
        return self._table.count({"IndexName": BY_CREATED, **expression.params(KeyConditionExpression=condition)})

    def stats(self, now: datetime, decay_factor: float) -> RecordStats:
        """One consistent Query over the counter shards, then Select=COUNT over the sparse GSIs: the cost grows
        with the number of shards and distinct confidence values, not with the number of memories."""
        counters, confidences = self._read_counters()
        decayed = sum(self._count_decayed(confidence, now, decay_factor) for confidence in confidences)
        pending, parked = (self._count_outbox(mark) for mark in (PENDING_MARK, PARKED_MARK))
        return stats_from_counters(counters, decayed=decayed, pending_index=pending, parked_index=parked)

    def _count_outbox(self, mark: str) -> int:
        expression = Expression()
        condition = expression.params(KeyConditionExpression=expression.equals(PENDING_PK, string(mark)))
        return self._table.count({"IndexName": PENDING_INDEX, **condition})

    # -- one attempt of each write: a domain transition (zengram.memory.domain.lifecycle) over fresh reads -----------

    def _create_or_corroborate_once(self, memory: Memory, max_observers: int) -> WriteOutcome:
        reads = _Reads(self)
        creation = lifecycle.create(memory, reads, max_observers=max_observers)
        if creation.observation is not None:
            return self._count_observation(creation.observation.before, memory, max_observers)
        self._persist(creation.changes, reads)
        return creation.outcome

    def _import_once(self, memory: Memory) -> ImportOutcome:
        """An active memory takes its content and key/subject guards in the same transaction as its item; the put
        is conditioned on the id being new (imported meanwhile → retried → a duplicate id)."""
        reads = _Reads(self)
        outcome = lifecycle.import_outcome(memory, reads)
        if outcome.kind is ImportKind.IMPORTED:
            self._persist([Change(None, memory)], reads)
        return outcome

    def _count_observation(self, existing: Memory | None, incoming: Memory, max_observers: int) -> WriteOutcome:
        """A corroboration as one atomic ADD (conditioned on what was read), so racing observers all count."""
        assert existing is not None
        op = writes.corroborate(existing, incoming.source_agent, incoming.created_at, max_observers=max_observers)
        return WriteOutcome(kind=WriteKind.CORROBORATED, memory=memory_from_item(self._table.update_returning(op)))

    def _update_once(self, memory_id: str, changes: MemoryChanges, at: datetime,
                     expected_revision: int | None) -> Memory:
        # The revise is conditioned on the revision read, so a change landing after the domain's revision check
        # cancels the write and the retry's fresh read ends there.
        reads = _Reads(self)
        change = lifecycle.update(lifecycle.require(reads, memory_id), changes, at, reads,
                                  expected_revision=expected_revision)
        self._persist([change], reads)
        return change.after

    def _soft_delete_once(self, memory_id: str, by: str, reason: str | None, at: datetime) -> Memory:
        reads = _Reads(self)
        current = lifecycle.require(reads, memory_id)
        deleted = current.soft_deleted(by, reason, at)
        if deleted is not current:
            self._persist([Change(current, deleted)], reads)
        return deleted

    def _restore_once(self, memory_id: str, at: datetime) -> list[Memory]:
        reads = _Reads(self)
        current = lifecycle.require(reads, memory_id)
        changes = lifecycle.restore(current, at, reads)
        self._persist(changes, reads)
        return [change.after for change in changes] or [current]

    def _persist(self, changes: Sequence[Change], reads: _Reads, *,
                 condition: Callable[[WriteOp], WriteOp] | None = None) -> None:
        """Writes `changes` in one transaction: each memory conditioned on the revision read (or on being new), the
        guards moved to what the memories now hold, and the counters. `condition` adds to each memory's write."""
        if not changes:
            return
        memory_ops = [writes.put_new_memory(change.after) if change.before is None
                      else writes.revise(change.before, change.after) for change in changes]
        ops = [condition(op) for op in memory_ops] if condition else memory_ops
        self._commit([*ops, *self._guard_moves(changes, reads)], [(c.before, c.after) for c in changes])

    def _guard_moves(self, changes: Sequence[Change], reads: _Reads) -> list[WriteOp]:
        """Only active memories hold guards: a memory entering the active set (or taking new content) claims its
        guards, conditioned on them being as read; one leaving it gives up those nobody claims, if they still
        point at it (a consistent table has them all)."""
        claims: dict[str, tuple[Item, str]] = {}
        given_up: dict[str, tuple[Item, str]] = {}
        for change in changes:
            before = _held_guards(change.before)
            after = _held_guards(change.after)
            claims.update((name, (key, change.after.id)) for name, key in after.items() if name not in before)
            if change.before is not None:
                given_up.update((name, (key, change.before.id)) for name, key in before.items() if name not in after)
        ops = [reads.guard(key).claim(memory_id) for key, memory_id in claims.values()]
        released = [entry for name, entry in given_up.items() if name not in claims]
        targets = self._guard_targets([key for key, _ in released])
        ops += [writes.release_guard(key, holder) for (key, target), (_, holder) in zip(targets, released, strict=True)
                if target == holder]
        return ops

    # -- guards ---------------------------------------------------------------------------------------

    def _guard_targets(self, keys: Sequence[Item]) -> list[tuple[Item, str | None]]:
        """Each guard with the id of the memory it points at (None when free), in one consistent batch read."""
        found = {item[PK]["S"]: item[GUARD_TARGET]["S"] for item in self._table.get_many(keys)}
        return [(key, found.get(key[PK]["S"])) for key in keys]

    def _read_guards(self, keys: Sequence[Item]) -> list[_Guard]:
        """The guards and their active holders: two batch reads, whatever the number of guards."""
        targets = self._guard_targets(keys)
        holders = self.get_many([target for _, target in targets if target is not None])
        return [_Guard(key, target, _active(holders.get(target)) if target else None) for key, target in targets]

    # -- stats ----------------------------------------------------------------------------------------

    def _commit(self, ops: list[WriteOp], changes: Sequence[tuple[Memory | None, Memory | None]]) -> None:
        """Writes `ops` plus, in the same transaction, the counter moves of `changes` (each memory as read
        and as written; None = absent). Every write path that changes what a memory counts towards
        (`zengram.memory.domain.stats.tally`) or puts it in the decay-index must commit through here."""
        counter_op = _counter_write(changes)
        self._table.write([*ops, counter_op] if counter_op else ops)

    def _read_counters(self) -> tuple[Counter[str], set[float]]:
        expression = Expression()
        condition = expression.equals(PK, string(STATS_KIND))
        params = {"ConsistentRead": True, **expression.params(KeyConditionExpression=condition)}
        counters: Counter[str] = Counter()
        confidences: set[float] = set()
        for item in self._table.query(params, page_size=STATS_SHARDS):
            confidences.update(float(text) for text in item.get(CONFIDENCE_SET, {}).get("SS", []))
            counters.update({name: int(value["N"]) for name, value in item.items() if "N" in value})
        return counters, confidences

    def _count_decayed(self, confidence: float, now: datetime, decay_factor: float) -> int:
        cutoff = decayed_before(confidence, now, decay_factor)
        if cutoff is None:
            return 0
        total = 0
        for shard in range(DECAY_SHARDS):
            expression = Expression()
            condition = (f"{expression.equals(DECAY_PK, string(decay_partition(confidence, shard)))} "
                         f"AND {expression.name(DECAY_SK)} < {expression.value(timestamp(cutoff))}")
            total += self._table.count({"IndexName": DECAY_INDEX,
                                        **expression.params(KeyConditionExpression=condition)})
        return total

    # -- plumbing -------------------------------------------------------------------------------------

    def _ignoring_conflict(self, ops: list[WriteOp]) -> None:
        with contextlib.suppress(WriteConflict):
            self._table.write(ops)

    @staticmethod
    def _retrying(attempt: Callable[[], T], action: str) -> T:
        """Runs `attempt` until no other writer interferes; jittered backoff spreads racing writers out."""
        for number in range(MAX_ATTEMPTS):
            try:
                return attempt()
            except WriteConflict:
                time.sleep(random.uniform(0, min(_BACKOFF_CAP_SECONDS, _BACKOFF_BASE_SECONDS * 2 ** number)))
        raise Conflict(f"{action}: other writers kept changing the same memories; try again")


@dataclass(frozen=True)
class _Guard:
    """A uniqueness guard as read: the memory id it points at, and that memory if it is active."""

    key: Item
    target: str | None
    holder: Memory | None

    def claim(self, memory_id: str) -> WriteOp:
        """Takes the guard for `memory_id`, provided nobody changed it since it was read. A guard pointing at a
        memory that is gone or inactive (only a hand-edited table has one) is taken over the same way."""
        if self.target is None:
            return writes.claim_guard(self.key, memory_id)
        return writes.move_guard(self.key, self.target, memory_id)


def _active(memory: Memory | None) -> Memory | None:
    return memory if memory is not None and memory.active else None


def _held_guards(memory: Memory | None) -> dict[str, Item]:
    """The guards an active memory holds, by partition key: its content guard and its key/subject guard."""
    if memory is None or not memory.active:
        return {}
    keys = [content_guard_key(memory), label_guard_key(memory)]
    return {key[PK]["S"]: key for key in keys if key is not None}


class _Reads:
    """`RecordLookups` for one attempt of a write. It keeps the guards it read, so the write's claims are conditioned
    on them being unchanged (another writer's claim in between cancels the transaction, and the attempt starts
    over)."""

    def __init__(self, store: DynamoDBRecordStore) -> None:
        self._store = store
        self._guards: dict[str, _Guard] = {}

    def find(self, memory_id: str) -> Memory | None:
        return self._store.get(memory_id)

    def active_with_content(self, memory: Memory) -> Memory | None:
        return self._guard_of(memory, content_guard_key(memory)).holder

    def label_holder(self, memory: Memory) -> Memory | None:
        key = label_guard_key(memory)
        return self._guard_of(memory, key).holder if key is not None else None

    def guard(self, key: Item) -> _Guard:
        """The guard as read (read now if no lookup read it)."""
        if key[PK]["S"] not in self._guards:
            self._remember(self._store._read_guards([key]))
        return self._guards[key[PK]["S"]]

    def _guard_of(self, memory: Memory, key: Item) -> _Guard:
        """Reads `memory`'s content and key/subject guards together (two batch reads), once."""
        if key[PK]["S"] not in self._guards:
            wanted = [k for k in (content_guard_key(memory), label_guard_key(memory))
                      if k is not None and k[PK]["S"] not in self._guards]
            self._remember(self._store._read_guards(wanted))
        return self._guards[key[PK]["S"]]

    def _remember(self, guards: Sequence[_Guard]) -> None:
        self._guards.update((guard.key[PK]["S"], guard) for guard in guards)


def _counter_write(changes: Sequence[tuple[Memory | None, Memory | None]]) -> WriteOp | None:
    """One random counter shard's share of `changes`, or None when nothing moves."""
    delta: Counter[str] = Counter()
    confidences: set[str] = set()
    for before, after in changes:
        delta.update(tally_change(before, after))
        if after is not None and _enters_decay_partition(before, after):
            confidences.add(confidence_key(after.confidence))
    moved = {name: value for name, value in delta.items() if value}
    if not moved and not confidences:
        return None
    return writes.add_to_counters(stats_shard_key(random.randrange(STATS_SHARDS)), moved, confidences)


def _enters_decay_partition(before: Memory | None, after: Memory) -> bool:
    """Whether the write puts `after` in a decay-index partition it was not in (its confidence is then new)."""
    return decays(after) and (before is None or not decays(before) or before.confidence != after.confidence)


def _listing(query: RecordQuery) -> dict[str, Any]:
    """Query parameters: one client's partition of by-client, else the by-created index; newest first
    unless `oldest_first`."""
    expression = Expression()
    if query.client_id is not None:
        index, partition = BY_CLIENT, expression.equals(CLIENT_PK, string(f"CLIENT#{query.client_id}"))
    else:
        index, partition = BY_CREATED, expression.equals(ALL_PK, string(MEMORY_KIND))
    if query.since is not None:
        partition += f" AND {expression.name(CREATED_SK)} >= {expression.value(timestamp(query.since))}"
    filters = [] if query.include_deleted else [_not_deleted(expression)]
    if not query.include_inactive:
        filters.append(expression.equals("active", {"BOOL": True}))
    for field in _FILTERED_FIELDS:
        value = encode(field, getattr(query, field))
        if value is not None:
            filters.append(expression.equals(field, value))
    filter_params = {"FilterExpression": " AND ".join(filters)} if filters else {}
    conditions = expression.params(KeyConditionExpression=partition, **filter_params)
    return {"IndexName": index, "ScanIndexForward": query.oldest_first, **conditions}


def _not_deleted(expression: Expression) -> str:
    return f"attribute_not_exists({expression.name('deleted_at')})"


def _only_if_unaccessed(op: WriteOp) -> WriteOp:
    """Adds `access_count = 0` to a revise's condition: access counting never bumps the revision."""
    params = dict(op.params)
    params["ConditionExpression"] += " AND #access_count = :never_accessed"
    params["ExpressionAttributeNames"] = {**params.get("ExpressionAttributeNames", {}), "#access_count": "access_count"}
    params["ExpressionAttributeValues"] = {**params.get("ExpressionAttributeValues", {}), ":never_accessed": _ZERO}
    return WriteOp(op.action, params)
