"""Reflect (POST /reflect): the request, the LLM's answer, and the response (zengram-api.md "Reflect")."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from zengram.kernel.text_rules import NotBlank
from zengram.memory.domain.llm import LLMInfo
from zengram.memory.domain.requests import ClientId, JsonInteger

MAX_TOPIC_CHARS = 500
DEFAULT_LIMIT = 20
MAX_LIMIT = 50


class ReflectRequest(BaseModel):
    """Body of POST /reflect."""

    model_config = ConfigDict(extra="ignore")

    topic: Annotated[str, StringConstraints(max_length=MAX_TOPIC_CHARS), NotBlank()]
    client_id: ClientId | None = None
    limit: JsonInteger = Field(default=DEFAULT_LIMIT, ge=1, le=MAX_LIMIT)


class Reflection(BaseModel):
    """What the LLM must answer, and (citations checked) the response's `reflection`."""

    model_config = ConfigDict(extra="ignore")

    summary: str = Field(description="A short synthesis of what the memories say about the topic.")
    patterns: list[str] = Field(description="Recurring themes, each ending with its [mem:<id>] citations.")
    timeline: list[str] = Field(description="Dated developments, oldest first, each ending with [mem:<id>].")
    contradictions: list[str] = Field(description="Memories that disagree, citing each side with [mem:<id>].")
    gaps: list[str] = Field(description="What the memories leave unknown about the topic.")


class ReflectResult(BaseModel):
    """The POST /reflect response."""

    topic: str
    client_id: str | None
    memories_analyzed: int
    reflection: Reflection
    cited_memory_ids: list[str]
    llm: LLMInfo
