"""/collections: upstream Zengram's collection registry (`zengram.memory.domain.collections`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from zengram.kernel.errors import Conflict, Forbidden, IndexUnavailable, InvalidInput, NotFound
from zengram.kernel.keys import TenantScope
from zengram.kernel.ports import Clock, Embedder
from zengram.memory.domain.collections import DEFAULT_COLLECTION, Collection, CollectionDraft
from zengram.memory.ports import CollectionStore
from zengram.memory.services.stats import StatsService


@dataclass(frozen=True)
class CollectionListing:
    name: str
    is_default: bool
    description: str | None
    dimensions: int
    created_at: datetime | None  # None for the default collection, which is never registered


@dataclass(frozen=True)
class CollectionCounts:
    name: str
    points_count: int
    vectors_count: int


class CollectionService:
    """The default collection holds every memory (its counts are /stats's: memories stored, documents indexed, of
    the caller's clients); registered ones hold none, as upstream's memory routes never write to them either."""

    def __init__(self, store: CollectionStore, stats: StatsService, embedder: Embedder, clock: Clock) -> None:
        self._store = store
        self._stats = stats
        self._embedder = embedder
        self._clock = clock

    def list(self) -> list[CollectionListing]:
        default = CollectionListing(DEFAULT_COLLECTION, True, "Every memory", self._embedder.dimension, None)
        return [default, *(CollectionListing(c.name, False, c.description, c.dimensions, c.created_at)
                           for c in self._store.list_all())]

    def create(self, draft: CollectionDraft) -> Collection:
        collection = Collection(name=draft.name, description=draft.description,
                                dimensions=self._embedder.dimension, created_at=self._clock.now())
        if draft.name == DEFAULT_COLLECTION or not self._store.create(collection):
            raise Conflict(f"Collection '{draft.name}' already exists")
        return collection

    def counts(self, name: str, scope: TenantScope = TenantScope.EVERYONE) -> CollectionCounts:
        if name != DEFAULT_COLLECTION:
            if self._store.get(name) is None:
                raise NotFound("Collection not found")
            return CollectionCounts(name, 0, 0)
        stored, indexed = self._stats.totals(scope)
        if indexed is None:
            raise IndexUnavailable("the search index cannot be counted; GET /stats reports why")
        return CollectionCounts(name, stored, indexed)

    def delete(self, name: str, *, approved: bool) -> None:
        if not approved:
            raise Forbidden("operator_approved=true is required to delete a collection")
        if name == DEFAULT_COLLECTION:
            raise InvalidInput("name", f"the default collection '{DEFAULT_COLLECTION}' cannot be deleted")
        if not self._store.delete(name):
            raise NotFound("Collection not found")
