"""The memory record's shapes, each built in one place: the whole record (`MemoryRecord`, the stored `Memory`
itself), the compact one (`CompactRecord.of`) and the headline (`HeadlineRecord.of`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from zengram.kernel.timestamps import format_timestamp
from zengram.memory.api.schemas import COMPACT_CHARS, PREVIEW_CHARS, truncate
from zengram.memory.domain.models import Memory
from zengram.web.schemas import left_out

MemoryRecord = Memory  # the whole record, exactly as stored (its JSON is the record's one wire form)


class CompactRecord(BaseModel):
    """A memory in brief (search `compact`, briefing `compact`, an entity's memories): content cut to 200 characters;
    a fact's key, a status's subject and value, and an inactive memory's state only where they apply."""

    id: str
    type: str
    content: str
    source_agent: str
    client_id: str
    importance: str
    created_at: str
    key: str | None = left_out()
    subject: str | None = left_out()
    status_value: str | None = left_out()  # a status's, with its subject
    active: Literal[False] | None = left_out()  # only on an inactive (superseded) memory
    superseded_by: str | None = left_out()

    @classmethod
    def of(cls, memory: Memory) -> CompactRecord:
        return cls(
            id=memory.id, type=memory.type.value, content=truncate(memory.content, COMPACT_CHARS),
            source_agent=memory.source_agent, client_id=memory.client_id, importance=memory.importance.value,
            created_at=format_timestamp(memory.created_at), key=memory.key, subject=memory.subject,
            status_value=memory.status_value if memory.subject is not None else None,
            active=None if memory.active else False, superseded_by=None if memory.active else memory.superseded_by,
        )


class HeadlineRecord(BaseModel):
    """A memory as a headline (briefing `summary`'s top_* lists): its first line, cut to 120 characters."""

    id: str
    headline: str
    source_agent: str
    client_id: str
    importance: str
    created_at: str

    @classmethod
    def of(cls, memory: Memory) -> HeadlineRecord:
        text = memory.content.strip()
        headline = text.splitlines()[0] if text else memory.content
        return cls(id=memory.id, headline=truncate(headline, PREVIEW_CHARS), source_agent=memory.source_agent,
                   client_id=memory.client_id, importance=memory.importance.value,
                   created_at=format_timestamp(memory.created_at))
