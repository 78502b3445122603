"""Upstream Zengram's collection registry: list, create, count, delete (zengram.memory.domain.collections)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Path, Query

from zengram.kernel.timestamps import format_timestamp
from zengram.memory.api.deps import CollectionServiceDep
from zengram.memory.api.schemas import CONFLICT
from zengram.memory.api.schemas.collections import (
    COLLECTION_NOT_FOUND,
    CollectionBody,
    CollectionCountsBody,
    CollectionDeletedBody,
    CollectionListBody,
    CreatedCollectionBody,
)
from zengram.memory.domain.collections import CollectionDeletion, CollectionDraft
from zengram.memory.domain.requests import StrictQueryBool
from zengram.web.access import ScopeDep
from zengram.web.schemas import ERROR_RESPONSES

router = APIRouter(tags=["collections"], responses=ERROR_RESPONSES)
CollectionName = Annotated[str, Path(min_length=1, max_length=128)]


@router.get("/collections", response_model=CollectionListBody)
def list_collections(collections: CollectionServiceDep) -> CollectionListBody:
    return CollectionListBody(collections=[
        CollectionBody(name=entry.name, is_default=entry.is_default, description=entry.description,
                       dimensions=entry.dimensions, exists_in_store=True,
                       created_at=format_timestamp(entry.created_at) if entry.created_at else None)
        for entry in collections.list()
    ])


@router.post("/collections", status_code=201, response_model=CreatedCollectionBody, responses=CONFLICT)
def create_collection(draft: CollectionDraft, collections: CollectionServiceDep) -> CreatedCollectionBody:
    created = collections.create(draft)
    return CreatedCollectionBody(name=created.name, dimensions=created.dimensions, description=created.description,
                                 created_at=format_timestamp(created.created_at))


@router.get("/collections/{name}", response_model=CollectionCountsBody, responses=COLLECTION_NOT_FOUND)
def get_collection(name: CollectionName, collections: CollectionServiceDep, scope: ScopeDep) -> CollectionCountsBody:
    """`points_count`: memories stored; `vectors_count`: memories indexed (of the API key's clients)."""
    counts = collections.counts(name, scope)
    return CollectionCountsBody(name=counts.name, points_count=counts.points_count,
                                vectors_count=counts.vectors_count)


@router.delete("/collections/{name}", response_model=CollectionDeletedBody, responses=COLLECTION_NOT_FOUND)
def delete_collection(
    name: CollectionName, collections: CollectionServiceDep,
    operator_approved: Annotated[StrictQueryBool | None, Query()] = None,
    body: Annotated[CollectionDeletion | None, Body()] = None,
) -> CollectionDeletedBody:
    """Needs the operator's approval (`operator_approved=true`, in the query or the body)."""
    approved = bool(operator_approved) or (body is not None and body.operator_approved)
    collections.delete(name, approved=approved)
    return CollectionDeletedBody(name=name)
