"""Values exchanged with the search index: what a document carries, how a search filters.

One index holds every searchable thing of the product, each document in a `scope`: Zengram memories in
`MEMORY_SCOPE` (the empty scope), the chat layer's subject memories and records in scopes of their own
(`zengram.chat.domain.scopes`). A search sees the scopes its filters name, Zengram memories unless it says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


MEMORY_SCOPE = ""  # the scope of Zengram memories: documents written before scopes existed are in it


class IndexAttributes(BaseModel):
    """The filterable fields of an indexed memory. Everything else is read from the record store."""

    model_config = ConfigDict(frozen=True)

    type: str
    source_agent: str
    client_id: str
    category: str
    knowledge_category: str | None = None
    active: bool = True
    valid_from: datetime
    valid_to: datetime | None = None
    created_at: datetime
    entities: tuple[str, ...] = ()  # entity keys (case-folded canonical names) the `entity` filter matches
    scope: str = MEMORY_SCOPE  # which kind of document, and whose (module docstring)


@dataclass(frozen=True)
class IndexDocument:
    """A memory as the search index stores it: id, text for BM25, vector for k-NN, filter fields."""

    id: str
    text: str
    vector: npt.NDArray[np.float32]
    attributes: IndexAttributes


class SearchFilters(BaseModel):
    """Filters every search path applies inside the index, before ranking.

    `entity` is an entity key (`entity_key` of a canonical name): documents whose `entities` hold it.
    `client_ids` is a tenant scope (an API key's clients): documents of any of them; an empty tuple matches
    nothing. It applies together with `client_id`.
    Inactive (superseded) documents are excluded unless `include_inactive`; `at_time` keeps documents
    valid at that moment (valid_from ≤ T < valid_to), inactive ones included. `date_from`/`date_to` keep
    documents whose `valid_from` (when the memory happened or became true; its stored time when not given)
    lies within them, both bounds included.
    `scopes`: documents in any of these scopes (by default Zengram memories only); an empty tuple matches nothing.
    """

    model_config = ConfigDict(frozen=True)

    type: str | None = None
    source_agent: str | None = None
    client_id: str | None = None
    client_ids: tuple[str, ...] | None = None
    category: str | None = None
    knowledge_category: str | None = None
    entity: str | None = None
    include_inactive: bool = False
    at_time: datetime | None = None
    date_from: datetime | None = None
    date_to: datetime | None = None
    scopes: tuple[str, ...] = (MEMORY_SCOPE,)


class IndexHit(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    score: float
