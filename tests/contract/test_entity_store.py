"""The `EntityStore` contract (see zengram.memory.ports.EntityStore), on SQLite and on DynamoDB (moto server)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

from zengram.memory.domain.entities import EntityRef, EntityType, RelatedEntity
from zengram.memory.ports import EntityStore

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
NEXT = EntityRef(name="Next.js", type=EntityType.TECHNOLOGY)
POSTGRES = EntityRef(name="PostgreSQL", type=EntityType.TECHNOLOGY)
ACME = EntityRef(name="acme-corp", type=EntityType.CLIENT)
STRIPE = EntityRef(name="Stripe", type=EntityType.SERVICE)


def mention(store: EntityStore, memory_id: str, *refs: EntityRef, minutes: int = 0, seen: int | None = None) -> None:
    """Memory `memory_id` (created `minutes` after T0) mentions `refs`, as seen `seen` minutes after T0."""
    created = T0 + timedelta(minutes=minutes)
    store.set_mentions(memory_id, created, list(refs), T0 + timedelta(minutes=minutes if seen is None else seen))


def test_mentions_create_entities_with_counts_and_first_and_last_seen(entity_store: EntityStore) -> None:
    mention(entity_store, "m1", NEXT, ACME, minutes=0)
    mention(entity_store, "m2", NEXT, minutes=5)

    next_js = entity_store.get("next.js")
    assert next_js is not None
    assert (next_js.name, next_js.type, next_js.mention_count) == ("Next.js", EntityType.TECHNOLOGY, 2)
    assert (next_js.first_seen, next_js.last_seen) == (T0, T0 + timedelta(minutes=5))
    assert entity_store.get("acme-corp") is not None
    assert entity_store.get("unknown") is None
    assert set(entity_store.get_many(["next.js", "acme-corp", "nope"])) == {"next.js", "acme-corp"}


def test_an_existing_entity_keeps_its_name_and_type(entity_store: EntityStore) -> None:
    mention(entity_store, "m1", NEXT)
    mention(entity_store, "m2", EntityRef(name="NEXT.JS", type=EntityType.SYSTEM))

    stored = entity_store.get("next.js")
    assert stored is not None and (stored.name, stored.type, stored.mention_count) == ("Next.js",
                                                                                     EntityType.TECHNOLOGY, 2)


def test_listing_is_most_mentioned_first_filtered_by_type_and_paged(entity_store: EntityStore) -> None:
    mention(entity_store, "m1", NEXT, POSTGRES, ACME)
    mention(entity_store, "m2", NEXT, POSTGRES)
    mention(entity_store, "m3", NEXT)

    names = [entity.name for entity in entity_store.list_entities(None, 10, 0)]
    assert names == ["Next.js", "PostgreSQL", "acme-corp"]
    assert [e.name for e in entity_store.list_entities(EntityType.TECHNOLOGY, 10, 0)] == ["Next.js", "PostgreSQL"]
    assert [e.name for e in entity_store.list_entities(None, 1, 1)] == ["PostgreSQL"]
    assert entity_store.list_entities(EntityType.PERSON, 10, 0) == []


def test_co_mentions_are_edges_whose_strength_counts_memories(entity_store: EntityStore) -> None:
    mention(entity_store, "m1", NEXT, POSTGRES, ACME)
    mention(entity_store, "m2", NEXT, POSTGRES)

    assert entity_store.related("next.js", 10) == [RelatedEntity(name="PostgreSQL", strength=2),
                                                   RelatedEntity(name="acme-corp", strength=1)]
    assert entity_store.related("acme-corp", 10) == [RelatedEntity(name="Next.js", strength=1),
                                                     RelatedEntity(name="PostgreSQL", strength=1)]
    assert entity_store.related("next.js", 1) == [RelatedEntity(name="PostgreSQL", strength=2)]


def test_memory_ids_are_newest_memory_first(entity_store: EntityStore) -> None:
    mention(entity_store, "m-old", NEXT, minutes=0)
    mention(entity_store, "m-new", NEXT, minutes=10)
    mention(entity_store, "m-mid", NEXT, minutes=5)

    assert entity_store.memory_ids("next.js") == ["m-new", "m-mid", "m-old"]
    assert entity_store.memory_ids("next.js", 2) == ["m-new", "m-mid"]
    assert entity_store.memory_ids("unknown") == []


def test_iter_memory_ids_pages_newest_first(entity_store: EntityStore) -> None:
    for n in range(4):
        mention(entity_store, f"m{n}", NEXT, minutes=n)
    for name in ("t-a", "t-c", "t-b"):  # created at the same moment: then id descending, across page boundaries
        mention(entity_store, name, NEXT, minutes=10)
    newest_first = ["t-c", "t-b", "t-a", "m3", "m2", "m1", "m0"]

    for page_size in (1, 2, 7, 100):
        assert list(entity_store.iter_memory_ids("next.js", page_size=page_size)) == newest_first
    assert list(entity_store.iter_memory_ids("next.js")) == entity_store.memory_ids("next.js") == newest_first
    assert list(entity_store.iter_memory_ids("unknown")) == []


def test_iter_memory_ids_reads_a_page_only_when_it_is_reached(entity_store: EntityStore) -> None:
    # Given an iterator whose first page (two links) has been read
    for n in range(1, 5):
        mention(entity_store, f"m{n}", NEXT, minutes=n)
    links = entity_store.iter_memory_ids("next.js", page_size=2)
    assert [next(links), next(links)] == ["m4", "m3"]

    # When a link that sorts after every page read so far is made
    mention(entity_store, "m0", NEXT, minutes=0)

    # Then the rest still holds it: the later pages were not read up front
    assert list(links) == ["m2", "m1", "m0"]


def test_changing_a_memorys_entities_moves_links_counts_and_edges(entity_store: EntityStore) -> None:
    mention(entity_store, "m1", NEXT, POSTGRES)
    mention(entity_store, "m2", NEXT, POSTGRES)

    mention(entity_store, "m1", NEXT, STRIPE, seen=1)  # content changed: PostgreSQL dropped, Stripe added

    postgres, stripe = entity_store.get("postgresql"), entity_store.get("stripe")
    assert postgres is not None and postgres.mention_count == 1
    assert stripe is not None and stripe.mention_count == 1
    assert stripe.first_seen == T0 + timedelta(minutes=1)
    assert entity_store.memory_ids("postgresql") == ["m2"]
    assert entity_store.related("next.js", 10) == [RelatedEntity(name="PostgreSQL", strength=1),
                                                   RelatedEntity(name="Stripe", strength=1)]
    assert entity_store.related("postgresql", 10) == [RelatedEntity(name="Next.js", strength=1)]


def test_setting_the_same_mentions_again_changes_nothing(entity_store: EntityStore) -> None:
    mention(entity_store, "m1", NEXT, POSTGRES)
    mention(entity_store, "m1", NEXT, POSTGRES)

    next_js = entity_store.get("next.js")
    assert next_js is not None and next_js.mention_count == 1
    assert entity_store.related("next.js", 10) == [RelatedEntity(name="PostgreSQL", strength=1)]
    assert entity_store.stats().total == 2


def test_no_entities_unlinks_the_memory(entity_store: EntityStore) -> None:
    mention(entity_store, "m1", NEXT, POSTGRES)
    mention(entity_store, "m1")

    next_js = entity_store.get("next.js")
    assert next_js is not None and next_js.mention_count == 0
    assert entity_store.memory_ids("next.js") == []
    assert entity_store.related("next.js", 10) == []


def test_stats_count_entities_by_type_and_name_the_most_mentioned(entity_store: EntityStore) -> None:
    mention(entity_store, "m1", NEXT, POSTGRES, ACME)
    mention(entity_store, "m2", NEXT)

    stats = entity_store.stats(top=2)
    assert stats.total == 3
    assert stats.by_type == {"client": 1, "technology": 2}
    assert [entity.name for entity in stats.top_mentioned] == ["Next.js", "acme-corp"]  # ties: by key


def test_set_type_reclassifies_and_moves_the_type_counts(entity_store: EntityStore) -> None:
    mention(entity_store, "m1", POSTGRES, ACME)

    changed = entity_store.set_type("postgresql", EntityType.SYSTEM)

    assert changed is not None and changed.type is EntityType.SYSTEM
    stored = entity_store.get("postgresql")
    assert stored is not None and stored.type is EntityType.SYSTEM
    assert [e.name for e in entity_store.list_entities(EntityType.SYSTEM, 10, 0)] == ["PostgreSQL"]
    assert entity_store.list_entities(EntityType.TECHNOLOGY, 10, 0) == []
    assert entity_store.stats().by_type == {"client": 1, "system": 1}
    assert entity_store.set_type("unknown", EntityType.SYSTEM) is None


def test_concurrent_mentions_lose_no_increment(entity_store: EntityStore) -> None:
    writers = 20
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda n: mention(entity_store, f"m{n}", NEXT, POSTGRES, minutes=n), range(writers)))

    next_js = entity_store.get("next.js")
    assert next_js is not None and next_js.mention_count == writers
    assert entity_store.related("next.js", 10) == [RelatedEntity(name="PostgreSQL", strength=writers)]
    assert len(entity_store.memory_ids("next.js")) == writers
    assert entity_store.stats().total == 2


def test_the_adapter_is_an_entity_store(entity_store: EntityStore) -> None:
    assert isinstance(entity_store, EntityStore)


def test_an_entity_no_memory_names_any_more_can_be_removed(entity_store: EntityStore) -> None:
    mention(entity_store, "m1", NEXT, ACME)
    mention(entity_store, "m2", NEXT)

    assert entity_store.remove_unlinked("next.js") is False  # still linked: stays
    mention(entity_store, "m1", ACME)
    mention(entity_store, "m2")
    assert entity_store.remove_unlinked("next.js") is True

    assert entity_store.get("next.js") is None
    assert [entity.name for entity in entity_store.list_entities(None, 10, 0)] == ["acme-corp"]
    stats = entity_store.stats()
    assert (stats.total, stats.by_type) == (1, {"client": 1})
    assert entity_store.related("acme-corp", 10) == []
    assert entity_store.remove_unlinked("next.js") is False  # unknown now

    mention(entity_store, "m3", NEXT)  # named again: registered anew
    again = entity_store.get("next.js")
    assert again is not None and again.mention_count == 1
    assert entity_store.stats().total == 2
