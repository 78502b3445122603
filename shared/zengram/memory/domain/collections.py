"""Collections, as upstream Zengram names its memory namespaces: a registry of slugs beside the one collection
every memory is written to (`shared_memories`). Upstream's memory routes never pass a collection either, so a
registered collection stays empty; the routes exist so its clients' collection calls answer as they expect."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StringConstraints, field_serializer

DEFAULT_COLLECTION = "shared_memories"
SLUG_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,62}$"


class Collection(BaseModel):
    """A registered collection."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str | None = None
    dimensions: int
    created_at: datetime

    @field_serializer("created_at", when_used="json")
    def _timestamp_text(self, moment: datetime) -> str:
        from zengram.kernel.timestamps import format_timestamp

        return format_timestamp(moment)


class CollectionDraft(BaseModel):
    """Body of POST /collections."""

    model_config = ConfigDict(extra="ignore")

    name: Annotated[str, StringConstraints(pattern=SLUG_PATTERN)] = Field(
        description="A slug: lower-case letters, digits, `-` and `_`, starting with a letter or digit, 1-63 long")
    description: Annotated[str, StringConstraints(max_length=500)] | None = None


class CollectionDeletion(BaseModel):
    """Optional body of DELETE /collections/{name}: the operator's approval (or `?operator_approved=true`)."""

    model_config = ConfigDict(extra="ignore")

    operator_approved: StrictBool = False
