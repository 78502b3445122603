"""Client fingerprints: what lets the service tell which client a memory is about."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, field_serializer

from zengram.kernel.text_rules import HasText, NotBlank
from zengram.kernel.timestamps import format_timestamp


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


MAX_TERMS = 50  # per list: a fingerprint is a handful of names, not a dictionary
MAX_TERM_CHARS = 100
MAX_NAME_CHARS = 200


def _clean_terms(values: list[str]) -> list[str]:
    """Trimmed, without blanks or exact repeats, in the order given."""
    cleaned: list[str] = []
    for value in values:
        term = value.strip()
        if not term:
            raise ValueError("entries must not be blank")
        if term not in cleaned:
            cleaned.append(term)
    return cleaned


Term = Annotated[str, StringConstraints(max_length=MAX_TERM_CHARS), HasText()]
Terms = Annotated[list[Term], Field(max_length=MAX_TERMS), AfterValidator(_clean_terms)]
ClientName = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_NAME_CHARS), NotBlank()
]


class ClientDraft(BaseModel):
    """Body of PUT /clients/{client_id}: the whole fingerprint (lists left out are stored empty)."""

    model_config = ConfigDict(extra="ignore")

    name: ClientName | None = None
    aliases: Terms = Field(default_factory=list)
    people: Terms = Field(default_factory=list)
    domains: Terms = Field(default_factory=list)
    keywords: Terms = Field(default_factory=list)
