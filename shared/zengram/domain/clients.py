"""Client fingerprints: what lets the service tell which client a memory is about."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from zengram.domain.models import format_timestamp


class ClientFingerprint(BaseModel):
    """One known client: its id plus the words that point at it (semantics.md, client_id auto-resolution).

    Stored in the record store like any other record; `revision` guards concurrent updates.
    """

    model_config = ConfigDict(frozen=True)

    client_id: str
    name: str | None = None
    aliases: list[str] = Field(default_factory=list)
    people: list[str] = Field(default_factory=list)
    domains: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    created_at: datetime
    updated_at: datetime
    revision: int = 1

    @field_serializer("created_at", "updated_at", when_used="json")
    def _timestamp_text(self, moment: datetime) -> str:
        return format_timestamp(moment)
