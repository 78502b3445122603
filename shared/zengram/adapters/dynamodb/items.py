"""How memories and uniqueness guards look as DynamoDB items (low-level attribute values).

A memory field holding None is simply absent from the item. Timestamps are ISO strings (they sort as
text), `metadata` is a JSON string (so floats need no Decimal), `observed_by` a list (order matters).
"""

from __future__ import annotations

import json
import zlib
from datetime import datetime
from typing import Any

from zengram.adapters.dynamodb.schema import (
    ALL_PK,
    CLIENT_PK,
    CREATED_SK,
    DECAY_PK,
    DECAY_SK,
    PENDING_PK,
    PENDING_SK,
    PK,
    SK,
    THREAD_PK,
)
from zengram.kernel.timestamps import format_timestamp, parse_timestamp
from zengram.memory.domain.models import Memory, MemoryType
from zengram.memory.domain.stats import decay_reference, decays

AttributeValue = dict[str, Any]
Item = dict[str, AttributeValue]

MEMORY_KIND = "MEMORY"
GUARD_KIND = "GUARD"
PENDING_MARK = "PENDING"  # pending_pk of a memory in the index outbox's queue (the sweep's work)...
PARKED_MARK = "PARKED"  # ...and of one the sweep gave up on: the same sparse GSI, another partition
INDEX_ATTEMPTS, INDEX_ERROR = "index_attempts", "index_error"  # the sweep's failed attempts at this revision
GUARD_TARGET = "memory_id"

_TIMESTAMP_FIELDS = frozenset({"valid_from", "valid_to", "created_at", "updated_at", "superseded_at", "deleted_at",
                               "last_observed_at", "last_accessed_at"})
_INTEGER_FIELDS = frozenset({"observation_count", "access_count", "revision"})
_FLOAT_FIELDS = frozenset({"confidence"})
_BOOL_FIELDS = frozenset({"active", "consolidated"})


def string(text: str) -> AttributeValue:
    return {"S": text}


def number(value: int | float) -> AttributeValue:
    return {"N": repr(value)}


def timestamp(moment: datetime) -> AttributeValue:
    return string(format_timestamp(moment))


def encode(field: str, value: Any) -> AttributeValue | None:
    """One memory field as an attribute value; None for a None value (the attribute is left out)."""
    if value is None:
        return None
    if field in _TIMESTAMP_FIELDS:
        return timestamp(value)
    if field in _BOOL_FIELDS:
        return {"BOOL": bool(value)}
    if field in _INTEGER_FIELDS:
        return number(int(value))
    if field in _FLOAT_FIELDS:
        return number(float(value))
    if field == "metadata":
        return string(json.dumps(value, ensure_ascii=False))
    if field == "observed_by":
        return {"L": [string(name) for name in value]}
    if field == "entities":  # a JSON string like metadata: [{"name", "type", "confidence"}, ...]
        refs = [ref if isinstance(ref, dict) else ref.model_dump(mode="json") for ref in value]
        return string(json.dumps(refs, ensure_ascii=False, default=str))
    return string(str(value))  # plain strings and StrEnums


def decode(field: str, attribute: AttributeValue) -> Any:
    if field in _TIMESTAMP_FIELDS:
        return parse_timestamp(attribute["S"])
    if field in _BOOL_FIELDS:
        return attribute["BOOL"]
    if field in _INTEGER_FIELDS:
        return int(attribute["N"])
    if field in _FLOAT_FIELDS:
        return float(attribute["N"])
    if field in ("metadata", "entities"):
        return json.loads(attribute["S"])
    if field == "observed_by":
        return [element["S"] for element in attribute["L"]]
    return attribute["S"]


# -- keys -------------------------------------------------------------------------------------------------


def memory_key(memory_id: str) -> Item:
    return {PK: string(f"{MEMORY_KIND}#{memory_id}"), SK: string(MEMORY_KIND)}


def _joined(prefix: str, *parts: str) -> str:
    # Escape '#' (and '%') so that e.g. client "a#b" + key "c" never meets client "a" + key "b#c".
    return "#".join((prefix, *(part.replace("%", "%25").replace("#", "%23") for part in parts)))


def _guard_key(prefix: str, *parts: str) -> Item:
    return {PK: string(_joined(prefix, *parts)), SK: string(GUARD_KIND)}


def hash_guard_key(client_id: str, type_: str, content_hash: str) -> Item:
    """Held by the one active memory with this (client_id, type, content_hash)."""
    return _guard_key("HASH", client_id, type_, content_hash)


def content_guard_key(memory: Memory) -> Item:
    return hash_guard_key(memory.client_id, memory.type.value, memory.content_hash)


def label_guard_key(memory: Memory) -> Item | None:
    """Held by the one active memory with this `Memory.label` in its client: a fact's key (`KEY#`), a status's
    subject (`SUBJECT#`)."""
    if memory.label is None:
        return None
    kind, label = memory.label
    return _guard_key(kind.upper(), memory.client_id, label)


def guard_item(key: Item, memory_id: str) -> Item:
    return {**key, "kind": string(GUARD_KIND), GUARD_TARGET: string(memory_id)}


# -- memories ---------------------------------------------------------------------------------------------


def created_sort_key(memory: Memory) -> AttributeValue:
    return string(f"{format_timestamp(memory.created_at)}#{memory.id}")


def pending_attributes(memory: Memory) -> Item:
    """The sparse pending-index entry: present until `mark_indexed` confirms this revision."""
    return {PENDING_PK: string(PENDING_MARK), PENDING_SK: queue_position(memory.id, memory.updated_at)}


def queue_position(memory_id: str, at: datetime) -> AttributeValue:
    """Where a memory sits in the outbox (pending_sk): by time, then id."""
    return string(f"{format_timestamp(at)}#{memory_id}")


def queued_at(item: Item) -> datetime:
    return parse_timestamp(item[PENDING_SK]["S"].split("#", 1)[0])


def memory_item(memory: Memory) -> Item:
    """The whole item for a new memory: fields, GSI keys, and the pending mark."""
    fields = {name: encode(name, value) for name, value in memory.model_dump().items()}
    return {
        **memory_key(memory.id),
        "kind": string(MEMORY_KIND),
        CLIENT_PK: string(f"CLIENT#{memory.client_id}"),
        ALL_PK: string(MEMORY_KIND),
        CREATED_SK: created_sort_key(memory),
        **pending_attributes(memory),
        **derived_attributes(memory),
        **{name: value for name, value in fields.items() if value is not None},
    }


DECAY_SHARDS = 4  # decay-index partitions per confidence value: spreads the GSI's writes
STATS_KIND = "STATS"  # counter items: pk STATS, sk SHARD#<n>; the numbers are summed over the shards
STATS_SHARDS = 8  # each write adds to one at random, so no single item takes every write
CONFIDENCE_SET = "decay_confidences"  # string set on counter items: each confidence the decay-index holds


def stats_shard_key(shard: int) -> Item:
    return {PK: string(STATS_KIND), SK: string(f"SHARD#{shard:02d}")}


def confidence_key(confidence: float) -> str:
    return repr(float(confidence))


def decay_partition(confidence: float, shard: int) -> str:
    return f"DECAY#{confidence_key(confidence)}#{shard}"


def decay_attributes(memory: Memory) -> Item:
    """The decay-index entry: `decay_sk` (the moment decay counts from) on every memory, so an access can move
    it without knowing the memory; `decay_pk` only while it is an active fact or status, so only those count."""
    attributes = {DECAY_SK: timestamp(decay_reference(memory))}
    if decays(memory):
        shard = zlib.crc32(memory.id.encode()) % DECAY_SHARDS  # fixed per memory: a revise never moves it
        attributes[DECAY_PK] = string(decay_partition(memory.confidence, shard))
    return attributes


def thread_partition(client_id: str, source_agent: str) -> AttributeValue:
    return string(_joined("THREAD", client_id, source_agent))


def thread_attributes(memory: Memory) -> Item:
    """The by-thread entry: only a live event (active, not deleted) is in its conversation's partition."""
    if memory.type is MemoryType.EVENT and memory.active and memory.deleted_at is None:
        return {THREAD_PK: thread_partition(memory.client_id, memory.source_agent)}
    return {}


def derived_attributes(memory: Memory) -> Item:
    """The GSI keys that follow from a memory's fields (and move with them on a revise)."""
    return {**decay_attributes(memory), **thread_attributes(memory)}


def memory_from_item(item: Item) -> Memory:
    return Memory.model_validate({name: decode(name, item[name]) for name in Memory.model_fields if name in item})


def is_pending(item: Item) -> bool:
    return item.get(PENDING_PK) == string(PENDING_MARK)


def is_parked(item: Item) -> bool:
    return item.get(PENDING_PK) == string(PARKED_MARK)
