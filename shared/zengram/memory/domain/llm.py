"""What the LLM features (reflect, research) share: how a memory is shown to the model, and which model answered.

Pure: no I/O. A memory is shown as one line under its citation id, `[mem:<id>]`, which is what
`zengram.memory.domain.citations.CitationChecker` later checks the answer's citations against.
"""

from __future__ import annotations

from pydantic import BaseModel

from zengram.kernel.timestamps import format_timestamp
from zengram.memory.domain.models import Memory

__all__ = ["MAX_CHARS_PER_MEMORY", "LLMInfo", "memory_line"]

# One memory may hold 10,000 characters; tens of them whole would overflow a small model's context.
MAX_CHARS_PER_MEMORY = 1_500


class LLMInfo(BaseModel):
    # The model that answered (a response's `llm`). No docstring: it would become the OpenAPI description.
    provider: str
    model: str


def memory_line(memory: Memory, *, max_chars: int = MAX_CHARS_PER_MEMORY) -> str:
    """`[mem:<id>] (type, client, when, by whom, importance, about what) content Status: value.`, the content
    cut to `max_chars` characters (an ellipsis marks the cut)."""
    label = memory.key or memory.subject
    details = ", ".join(part for part in (
        memory.type.value, f"client {memory.client_id}", format_timestamp(memory.valid_from or memory.created_at),
        f"by {memory.source_agent}", f"importance {memory.importance.value}", f"about {label}" if label else "",
    ) if part)
    status = f" Status: {memory.status_value}." if memory.status_value else ""
    content = memory.content if len(memory.content) <= max_chars else memory.content[:max_chars] + "…"
    return f"[mem:{memory.id}] ({details}) {content}{status}"
