"""Upstream's collection registry bodies (/collections)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from zengram.web.schemas import documented_error

# -- /collections ---------------------------------------------------------------------------------------------


class CollectionBody(BaseModel):
    """A collection as listed: upstream's fields; the default one (`shared_memories`) holds every memory."""

    name: str
    is_default: bool
    description: str | None
    dimensions: int
    created_at: str | None  # null for the default collection, which was never created by a call
    exists_in_store: bool


class CollectionListBody(BaseModel):
    collections: list[CollectionBody]


class CreatedCollectionBody(BaseModel):
    name: str
    dimensions: int
    description: str | None
    created_at: str


class CollectionCountsBody(BaseModel):
    name: str
    points_count: int
    vectors_count: int


class CollectionDeletedBody(BaseModel):
    deleted: Literal[True] = True
    name: str


COLLECTION_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: documented_error("No such collection")}
