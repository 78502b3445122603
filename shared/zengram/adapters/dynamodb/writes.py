"""The conditional writes the record store is made of. Each is one action of a `TransactWriteItems`
(or a single-item call when it is alone); its condition is what makes concurrent writers safe."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from zengram.adapters.dynamodb.items import (
    CONFIDENCE_SET,
    GUARD_TARGET,
    INDEX_ATTEMPTS,
    INDEX_ERROR,
    PARKED_MARK,
    PENDING_MARK,
    STATS_KIND,
    AttributeValue,
    Item,
    derived_attributes,
    encode,
    guard_item,
    memory_item,
    memory_key,
    number,
    pending_attributes,
    queue_position,
    string,
    timestamp,
)
from zengram.adapters.dynamodb.schema import DECAY_SK, PENDING_PK, PENDING_SK, PK
from zengram.memory.domain.models import Memory


@dataclass(frozen=True)
class WriteOp:
    """One Put, Update or Delete, with its parameters minus TableName."""

    action: Literal["Put", "Update", "Delete"]
    params: dict[str, Any]


class Expression:
    """Collects `#name` and `:value` placeholders so no attribute name can clash with a reserved word."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}
        self._values: dict[str, AttributeValue] = {}

    def name(self, attribute: str) -> str:
        placeholder = f"#{attribute}"
        self._names[placeholder] = attribute
        return placeholder

    def value(self, attribute_value: AttributeValue) -> str:
        placeholder = f":v{len(self._values)}"
        self._values[placeholder] = attribute_value
        return placeholder

    def equals(self, attribute: str, attribute_value: AttributeValue) -> str:
        return f"{self.name(attribute)} = {self.value(attribute_value)}"

    def params(self, **expressions: str) -> dict[str, Any]:
        """The expressions plus placeholder maps (DynamoDB rejects empty maps, so those are left out)."""
        params: dict[str, Any] = dict(expressions)
        if self._names:
            params["ExpressionAttributeNames"] = dict(self._names)
        if self._values:
            params["ExpressionAttributeValues"] = dict(self._values)
        return params


def _update(key: Item, expression: Expression, update: str, condition: str) -> WriteOp:
    params = expression.params(UpdateExpression=update, ConditionExpression=condition)
    return WriteOp("Update", {"Key": key, **params})


# -- memories ---------------------------------------------------------------------------------------------


def put_new_memory(memory: Memory) -> WriteOp:
    return WriteOp("Put", {"Item": memory_item(memory), "ConditionExpression": f"attribute_not_exists({PK})"})


def revise(before: Memory, after: Memory) -> WriteOp:
    """Writes the fields that differ between `before` and `after` and marks the memory pending, only if it is
    still at `before.revision`: every change a reader could act on bumps the revision, so this is the
    optimistic lock. Counters (access, observations) are never in the diff, so concurrent ADDs survive."""
    expression = Expression()
    assignments, removals = [], []
    for field in Memory.model_fields:
        new_value = getattr(after, field)
        if new_value == getattr(before, field):
            continue
        encoded = encode(field, new_value)
        if encoded is None:
            removals.append(expression.name(field))
        else:
            assignments.append(expression.equals(field, encoded))
    assignments += [expression.equals(name, value) for name, value in pending_attributes(after).items()]
    derived_before, derived_after = derived_attributes(before), derived_attributes(after)
    assignments += [expression.equals(name, value) for name, value in derived_after.items()
                    if derived_before.get(name) != value]
    removals += [expression.name(name) for name in derived_before if name not in derived_after]
    removals += [expression.name(INDEX_ATTEMPTS), expression.name(INDEX_ERROR)]  # a new revision starts afresh
    update = f"SET {', '.join(assignments)}" + (f" REMOVE {', '.join(removals)}" if removals else "")
    condition = expression.equals("revision", number(before.revision))
    return _update(memory_key(before.id), expression, update, condition)


def corroborate(existing: Memory, agent: str, at: datetime, *, max_observers: int) -> WriteOp:
    """Counts one more observer of an active memory, naming it while `observed_by` has room. The condition
    re-checks what the caller saw, so two racing corroborations by the same agent count once."""
    expression = Expression()
    observers, agent_value = expression.name("observed_by"), expression.value(string(agent))
    has_room = len(existing.observed_by) < max_observers
    conditions = [
        expression.equals("active", {"BOOL": True}),
        f"{expression.name('source_agent')} <> {agent_value}",
        f"NOT contains({observers}, {agent_value})",
        f"size({observers}) {'<' if has_room else '>='} {expression.value(number(max_observers))}",
    ]
    assignments = [expression.equals("last_observed_at", timestamp(at))]
    if has_room:
        assignments.append(f"{observers} = list_append({observers}, {expression.value({'L': [string(agent)]})})")
    update = f"SET {', '.join(assignments)} ADD {expression.name('observation_count')} {expression.value(number(1))}"
    return _update(memory_key(existing.id), expression, update, " AND ".join(conditions))


def count_access(memory_id: str, count: int, at: datetime | None) -> WriteOp:
    """Adds `count` accesses atomically; with `at`, also moves `last_accessed_at` forward (never back)."""
    expression = Expression()
    update = f"ADD {expression.name('access_count')} {expression.value(number(count))}"
    condition = f"attribute_exists({expression.name(PK)})"  # never create an item for an unknown id
    if at is not None:
        stamp, last = expression.value(timestamp(at)), expression.name("last_accessed_at")
        update += f" SET {last} = {stamp}, {expression.name(DECAY_SK)} = {stamp}"  # moves it in the decay-index
        condition += f" AND (attribute_not_exists({last}) OR {last} <= {stamp})"
    return _update(memory_key(memory_id), expression, update, condition)


def clear_pending(memory_id: str, revision: int) -> WriteOp:
    """Drops the memory from the outbox (pending or parked), unless it changed again since `revision`."""
    expression = Expression()
    names = ", ".join(expression.name(name) for name in (PENDING_PK, PENDING_SK, INDEX_ATTEMPTS, INDEX_ERROR))
    return _update(memory_key(memory_id), expression, f"REMOVE {names}",
                   expression.equals("revision", number(revision)))


def count_index_failure(memory_id: str, revision: int, error: str, at: datetime) -> WriteOp:
    """Counts a failed index attempt at a memory still at `revision` and not parked: pending afterwards, with the
    error kept, queued again at `at`."""
    expression = Expression()
    pending = expression.value(string(PENDING_MARK))
    update = (f"SET {expression.name(PENDING_PK)} = {pending}, "
              f"{expression.name(PENDING_SK)} = {expression.value(queue_position(memory_id, at))}, "
              f"{expression.equals(INDEX_ERROR, string(error))} "
              f"ADD {expression.name(INDEX_ATTEMPTS)} {expression.value(number(1))}")
    condition = (f"{expression.equals('revision', number(revision))} AND "
                 f"(attribute_not_exists({expression.name(PENDING_PK)}) OR {expression.name(PENDING_PK)} = {pending})")
    return _update(memory_key(memory_id), expression, update, condition)


def park(memory_id: str, revision: int, attempts: int) -> WriteOp:
    """Moves a pending memory to the parked partition, if nothing changed since its `attempts`-th failure."""
    expression = Expression()
    update = f"SET {expression.equals(PENDING_PK, string(PARKED_MARK))}"
    condition = " AND ".join([expression.equals("revision", number(revision)),
                              expression.equals(PENDING_PK, string(PENDING_MARK)),
                              expression.equals(INDEX_ATTEMPTS, number(attempts))])
    return _update(memory_key(memory_id), expression, update, condition)


def requeue(memory_id: str, at: datetime) -> WriteOp:
    """Makes a parked memory pending again, queued at `at`, with no failed attempts."""
    expression = Expression()
    update = (f"SET {expression.equals(PENDING_PK, string(PENDING_MARK))}, "
              f"{expression.name(PENDING_SK)} = {expression.value(queue_position(memory_id, at))} "
              f"REMOVE {expression.name(INDEX_ATTEMPTS)}, {expression.name(INDEX_ERROR)}")
    return _update(memory_key(memory_id), expression, update, expression.equals(PENDING_PK, string(PARKED_MARK)))


# -- guards -----------------------------------------------------------------------------------------------


def claim_guard(key: Item, memory_id: str) -> WriteOp:
    """Takes a free guard; fails when any memory holds it."""
    return WriteOp("Put", {"Item": guard_item(key, memory_id), "ConditionExpression": f"attribute_not_exists({PK})"})


def move_guard(key: Item, holder_id: str, memory_id: str) -> WriteOp:
    """Hands a guard from `holder_id` to `memory_id`; fails when someone else moved it first."""
    expression = Expression()
    condition = expression.equals(GUARD_TARGET, string(holder_id))
    return WriteOp("Put", {"Item": guard_item(key, memory_id), **expression.params(ConditionExpression=condition)})


def release_guard(key: Item, holder_id: str) -> WriteOp:
    expression = Expression()
    condition = expression.equals(GUARD_TARGET, string(holder_id))
    return WriteOp("Delete", {"Key": key, **expression.params(ConditionExpression=condition)})


# -- stats counters ---------------------------------------------------------------------------------------


def add_to_counters(key: Item, delta: dict[str, int], confidences: set[str]) -> WriteOp:
    """Adds `delta` to one counter shard and records confidence values seen in the decay-index. Unconditional:
    it is part of the transaction whose conditions make the memory writes (and so the delta) exact."""
    expression = Expression()
    additions = [f"{expression.name(name)} {expression.value(number(moved))}" for name, moved in sorted(delta.items())]
    if confidences:
        additions.append(f"{expression.name(CONFIDENCE_SET)} {expression.value({'SS': sorted(confidences)})}")
    update = f"SET {expression.equals('kind', string(STATS_KIND))} ADD {', '.join(additions)}"
    return WriteOp("Update", {"Key": key, **expression.params(UpdateExpression=update)})
