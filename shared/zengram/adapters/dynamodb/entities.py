"""The AWS `EntityStore`: the entity registry as items of the record store's single table.

Item kinds (infra/README.md, "Entity registry"):
- entity `ENTITY#<key>` / `ENTITY`: name, `entity_type`, `mention_count`, first/last seen; listed through the
  existing GSIs with overloaded keys: `all_pk = ENTITY` (by-created) and `client_pk = ENTITYTYPE#<type>`
  (by-client), both sorted by `created_sk = <rank>#<key>` where rank falls as `mention_count` grows.
- link `ENTITY#<key>` / `MEMORY#<created_at>#<memory id>`: the memory mentions the entity; `partners` lists
  the co-mentioned entity keys whose edges this link counted, `rev` is its optimistic lock.
- edge `ENTITY#<a>` / `EDGE#<b>`: `strength` = memories linked to both, `name` = b's display name.
- mentions `MENTIONS#<memory id>` / `MENTIONS`: the memory's entity keys (what to unlink on the next change).
- counters `ENTITYSTATS` / `ENTITYSTATS`: `total` and `type_<type>` entity counts.

A memory's change is applied entity by entity: one transaction per entity moves its link, its count (a
conditional write on the count read) and its own edge directions, so each step is atomic and idempotent, and a
retried call finishes what an interrupted one started.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any, TypeVar

from zengram.adapters.dynamodb.items import AttributeValue, Item, number, string
from zengram.adapters.dynamodb.schema import ALL_PK, BY_CLIENT, BY_CREATED, CLIENT_PK, CREATED_SK, PK, SK
from zengram.adapters.dynamodb.table import DynamoTable, WriteConflict, make_client
from zengram.adapters.dynamodb.writes import Expression, WriteOp
from zengram.kernel.errors import Conflict
from zengram.kernel.timestamps import format_timestamp, parse_timestamp
from zengram.memory.domain.entities import EntityRecord, EntityRef, EntityStats, EntityType, RelatedEntity

T = TypeVar("T")
ENTITY_KIND = "ENTITY"
STATS_KEY: Item = {PK: string("ENTITYSTATS"), SK: string("ENTITYSTATS")}
_RANK_BASE = 10**12
_MAX_ATTEMPTS = 25
_PAGE = 200


def _escaped(text: str) -> str:
    return text.replace("%", "%25").replace("#", "%23")


def entity_pk(key: str) -> AttributeValue:
    return string(f"{ENTITY_KIND}#{_escaped(key)}")


def entity_item_key(key: str) -> Item:
    return {PK: entity_pk(key), SK: string(ENTITY_KIND)}


def link_key(key: str, memory_id: str, memory_created_at: str) -> Item:
    return {PK: entity_pk(key), SK: string(f"MEMORY#{memory_created_at}#{memory_id}")}


def edge_key(key: str, other: str) -> Item:
    return {PK: entity_pk(key), SK: string(f"EDGE#{_escaped(other)}")}


def mentions_key(memory_id: str) -> Item:
    return {PK: string(f"MENTIONS#{memory_id}"), SK: string("MENTIONS")}


def _rank(key: str, mention_count: int) -> AttributeValue:
    """Ascending order of this text is mention_count descending, then key."""
    return string(f"{_RANK_BASE - mention_count:013d}#{key}")


def _record(item: Item) -> EntityRecord:
    return EntityRecord(
        name=item["name"]["S"], type=EntityType(item["entity_type"]["S"]),
        mention_count=int(item["mention_count"]["N"]),
        first_seen=parse_timestamp(item["first_seen"]["S"]) if "first_seen" in item else None,
        last_seen=parse_timestamp(item["last_seen"]["S"]) if "last_seen" in item else None,
    )


class DynamoDBEntityStore:
    """Thread-safe; shares the record store's table (and, when given, its client)."""

    def __init__(self, table_name: str, *, region: str | None = None, endpoint_url: str | None = None,
                 client: Any | None = None) -> None:
        self._table = DynamoTable(client or make_client(region=region, endpoint_url=endpoint_url), table_name)

    # -- writes ---------------------------------------------------------------------------------------

    def set_mentions(self, memory_id: str, memory_created_at: datetime, entities: Sequence[EntityRef],
                     seen_at: datetime) -> None:
        wanted = {ref.key: ref for ref in reversed(entities)}
        mentions = self._table.get(mentions_key(memory_id))
        # Links are keyed by the memory's creation time: keep the one they were written with.
        created = mentions["memory_created_at"]["S"] if mentions else format_timestamp(memory_created_at)
        previous = [element["S"] for element in mentions["entities"]["L"]] if mentions else []
        for key in sorted(set(previous) | wanted.keys()):
            partners = sorted(wanted.keys() - {key}) if key in wanted else None
            move = functools.partial(self._move_link, key, wanted.get(key), partners, wanted, memory_id, created,
                                     seen_at)
            self._retrying(move, f"entity {key}")
        if wanted:
            self._table.write([WriteOp("Put", {"Item": {
                **mentions_key(memory_id), "kind": string("MENTIONS"),
                "entities": {"L": [string(key) for key in sorted(wanted)]}, "memory_created_at": string(created),
            }})])
        elif mentions is not None:
            self._table.write([WriteOp("Delete", {"Key": mentions_key(memory_id)})])

    def set_type(self, key: str, new_type: EntityType) -> EntityRecord | None:
        return self._retrying(lambda: self._set_type_once(key, new_type), f"reclassify {key}")

    def remove_unlinked(self, key: str) -> bool:
        return self._retrying(lambda: self._remove_unlinked_once(key), f"remove {key}")

    # -- reads ----------------------------------------------------------------------------------------

    def get(self, key: str) -> EntityRecord | None:
        item = self._table.get(entity_item_key(key))
        return _record(item) if item else None

    def get_many(self, keys: Sequence[str]) -> dict[str, EntityRecord]:
        unique = list(dict.fromkeys(keys))
        by_pk = {entity_pk(key)["S"]: key for key in unique}
        items = self._table.get_many([entity_item_key(key) for key in unique])
        return {by_pk[item[PK]["S"]]: _record(item) for item in items}

    def list_entities(self, type_: EntityType | None, limit: int, offset: int) -> list[EntityRecord]:
        if limit <= 0:
            return []
        expression = Expression()
        if type_ is None:
            index, condition = BY_CREATED, expression.equals(ALL_PK, string(ENTITY_KIND))
        else:
            index, condition = BY_CLIENT, expression.equals(CLIENT_PK, string(f"ENTITYTYPE#{type_.value}"))
        params = {"IndexName": index, "ScanIndexForward": True, **expression.params(KeyConditionExpression=condition)}
        found: list[EntityRecord] = []
        for item in self._table.query(params, page_size=min(offset + limit, 1000)):
            found.append(_record(item))
            if len(found) >= offset + limit:
                break
        return found[offset:]

    def related(self, key: str, limit: int) -> list[RelatedEntity]:
        edges = [RelatedEntity(name=item["name"]["S"], strength=int(item["strength"]["N"]))
                 for item in self._table.query(self._prefix_query(key, "EDGE#"), page_size=_PAGE)]
        ranked = sorted((edge for edge in edges if edge.strength > 0), key=lambda edge: (-edge.strength, edge.name))
        return ranked[:limit]

    def memory_ids(self, key: str, limit: int | None = None) -> list[str]:
        params = {**self._prefix_query(key, "MEMORY#"), "ScanIndexForward": False}
        found: list[str] = []
        for item in self._table.query(params, page_size=min(limit or _PAGE, 1000)):
            found.append(item["memory_id"]["S"])
            if limit is not None and len(found) >= limit:
                break
        return found

    def iter_memory_ids(self, key: str, page_size: int = 100) -> Iterator[str]:
        """The link items newest first, one Query page of `page_size` at a time, only as far as they are read."""
        params = {**self._prefix_query(key, "MEMORY#"), "ScanIndexForward": False}
        for item in self._table.query(params, page_size=min(page_size, 1000)):
            yield item["memory_id"]["S"]

    def stats(self, top: int = 10) -> EntityStats:
        counters = self._table.get(STATS_KEY) or {}
        by_type = {name.removeprefix("type_"): int(value["N"]) for name, value in sorted(counters.items())
                   if name.startswith("type_") and int(value["N"]) > 0}
        total = int(counters["total"]["N"]) if "total" in counters else 0
        return EntityStats(total=total, by_type=by_type, top_mentioned=self.list_entities(None, top, 0))

    # -- one attempt of each write --------------------------------------------------------------------

    def _move_link(self, key: str, ref: EntityRef | None, partners: list[str] | None, wanted: dict[str, EntityRef],
                   memory_id: str, created: str, seen_at: datetime) -> None:
        """Brings one entity in line: linked with these `partners` (or unlinked when None)."""
        link = self._table.get(link_key(key, memory_id, created))
        entity = self._table.get(entity_item_key(key))
        before = [element["S"] for element in link["partners"]["L"]] if link else []
        after = partners or []
        delta = (partners is not None) - (link is not None)
        ops = [op for op in (self._link_op(key, link, partners, memory_id, created),
                             self._entity_op(key, entity, ref, delta, seen_at)) if op is not None]
        if entity is None and ref is not None:
            ops.append(_count_entity(ref.type, +1, new=True))
        ops += [_add_strength(key, other, +1, wanted[other].name) for other in sorted(set(after) - set(before))]
        ops += [_add_strength(key, other, -1, None) for other in sorted(set(before) - set(after))]
        if ops:
            self._table.write(ops)

    @staticmethod
    def _link_op(key: str, link: Item | None, partners: list[str] | None, memory_id: str,
                 created: str) -> WriteOp | None:
        expression = Expression()
        held = (expression.equals("rev", link["rev"]) if link else f"attribute_not_exists({expression.name(PK)})")
        if partners is None:
            return WriteOp("Delete", {"Key": link_key(key, memory_id, created),
                                      **expression.params(ConditionExpression=held)}) if link else None
        if link is not None and [element["S"] for element in link["partners"]["L"]] == partners:
            return None
        revision = int(link["rev"]["N"]) + 1 if link else 1
        item = {**link_key(key, memory_id, created), "kind": string("ENTITY_LINK"), "memory_id": string(memory_id),
                "partners": {"L": [string(partner) for partner in partners]}, "rev": number(revision)}
        return WriteOp("Put", {"Item": item, **expression.params(ConditionExpression=held)})

    @staticmethod
    def _entity_op(key: str, entity: Item | None, ref: EntityRef | None, delta: int,
                   seen_at: datetime) -> WriteOp | None:
        seen = format_timestamp(seen_at)
        if entity is None:
            if ref is None:
                return None
            item = {**entity_item_key(key), "kind": string(ENTITY_KIND), "name": string(ref.name),
                    "entity_type": string(ref.type.value), "mention_count": number(max(delta, 0)),
                    "first_seen": string(seen), "last_seen": string(seen), ALL_PK: string(ENTITY_KIND),
                    CLIENT_PK: string(f"ENTITYTYPE#{ref.type.value}"), CREATED_SK: _rank(key, max(delta, 0))}
            return WriteOp("Put", {"Item": item, "ConditionExpression": f"attribute_not_exists({PK})"})
        count = int(entity["mention_count"]["N"])
        first = min(entity.get("first_seen", {}).get("S", seen), seen) if ref else entity["first_seen"]["S"]
        last = max(entity.get("last_seen", {}).get("S", seen), seen) if ref else entity["last_seen"]["S"]
        if delta == 0 and (first, last) == (entity["first_seen"]["S"], entity["last_seen"]["S"]):
            return None
        expression = Expression()
        assignments = [expression.equals("mention_count", number(count + delta)),
                       expression.equals(CREATED_SK, _rank(key, count + delta)),
                       expression.equals("first_seen", string(first)), expression.equals("last_seen", string(last))]
        condition = expression.equals("mention_count", number(count))
        return WriteOp("Update", {"Key": entity_item_key(key), **expression.params(
            UpdateExpression=f"SET {', '.join(assignments)}", ConditionExpression=condition)})

    def _set_type_once(self, key: str, new_type: EntityType) -> EntityRecord | None:
        entity = self._table.get(entity_item_key(key))
        if entity is None:
            return None
        old_type = EntityType(entity["entity_type"]["S"])
        if old_type is not new_type:
            expression = Expression()
            update = (f"SET {expression.equals('entity_type', string(new_type.value))}, "
                      f"{expression.equals(CLIENT_PK, string(f'ENTITYTYPE#{new_type.value}'))}")
            condition = expression.equals("entity_type", string(old_type.value))
            self._table.write([
                WriteOp("Update", {"Key": entity_item_key(key), **expression.params(
                    UpdateExpression=update, ConditionExpression=condition)}),
                _count_entity(old_type, -1, new=False, also=(new_type, +1)),
            ])
        return _record(entity).model_copy(update={"type": new_type})

    def _remove_unlinked_once(self, key: str) -> bool:
        """Deletes the entity item while its count is 0 (a link made meanwhile fails the condition, and the
        retry then sees it linked), and takes it off the counters. Its 0-strength edges stay: never reported."""
        entity = self._table.get(entity_item_key(key))
        if entity is None or int(entity["mention_count"]["N"]) != 0:
            return False
        expression = Expression()
        condition = expression.equals("mention_count", number(0))
        self._table.write([
            WriteOp("Delete", {"Key": entity_item_key(key), **expression.params(ConditionExpression=condition)}),
            _count_entity(EntityType(entity["entity_type"]["S"]), -1, new=True),
        ])
        return True

    # -- plumbing -------------------------------------------------------------------------------------

    @staticmethod
    def _prefix_query(key: str, prefix: str) -> dict[str, Any]:
        expression = Expression()
        condition = (f"{expression.equals(PK, entity_pk(key))} AND "
                     f"begins_with({expression.name(SK)}, {expression.value(string(prefix))})")
        return expression.params(KeyConditionExpression=condition)

    @staticmethod
    def _retrying(attempt: Callable[[], T], action: str) -> T:
        for attempt_number in range(_MAX_ATTEMPTS):
            try:
                return attempt()
            except WriteConflict:
                time.sleep(random.uniform(0, min(1.0, 0.02 * 2 ** attempt_number)))
        raise Conflict(f"{action}: other writers kept changing the same entity; try again")


def _add_strength(key: str, other: str, amount: int, other_name: str | None) -> WriteOp:
    """Atomic ADD on one direction of an edge; a new edge takes the other end's display name."""
    expression = Expression()
    update = f"ADD {expression.name('strength')} {expression.value(number(amount))}"
    if other_name is not None:
        name = expression.name("name")
        update = (f"SET {name} = if_not_exists({name}, {expression.value(string(other_name))}), "
                  f"{expression.name('kind')} = {expression.value(string('ENTITY_EDGE'))} {update}")
    return WriteOp("Update", {"Key": edge_key(key, other), **expression.params(UpdateExpression=update)})


def _count_entity(type_: EntityType, amount: int, *, new: bool,
                  also: tuple[EntityType, int] | None = None) -> WriteOp:
    """The registry's counters: `total` (when an entity is created) and one `type_<type>` per type."""
    expression = Expression()
    zero = expression.value(number(0))
    changes = [(f"type_{type_.value}", amount)] + ([(f"type_{also[0].value}", also[1])] if also else [])
    if new:
        changes.append(("total", amount))
    assignments = [f"{expression.name(name)} = if_not_exists({expression.name(name)}, {zero}) + "
                   f"{expression.value(number(change))}" for name, change in changes]
    return WriteOp("Update", {"Key": STATS_KEY, **expression.params(UpdateExpression=f"SET {', '.join(assignments)}")})
