"""Index-time context: a memory indexed together with the memory its author stored just before it.

A conversation turn often answers the turn before it ("Yes! Last year." after "Did you paint that?"), so
on its own it shares few words, and little meaning, with a question about it. Indexing each event with the
previous event of the same client and agent, when both fall inside a short window, lets both the keyword
and the vector path find it. The turn after it helps the same way ("When did you paint that?" → "I painted it
last May." → "Wow, May already!"), so an event can also be indexed with the events that follow it; those are
added when they are stored. Pure functions; `IndexSync` reads the neighbours from the record store.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from zengram.domain.models import Memory, MemoryType
from zengram.domain.retrieval import DEFAULT_PROFILE

CONTEXT_TYPES = frozenset({MemoryType.EVENT})
# Separates a memory's own text from its context in the indexed text. A control character: tokenizers
# treat it as a word break, and `own_text` cuts there so entity filters match the memory's own words only.
CONTEXT_MARK = "\x1e"


@dataclass(frozen=True)
class ContextPolicy:
    """`turns` previous and `next_turns` following memories (0: off) within `window` of each other; `embed`: the
    vector sees them too. The defaults are the product's: turns from the default retrieval profile
    (`zengram.domain.retrieval`), window and embed from here (Settings takes them from here)."""

    turns: int = DEFAULT_PROFILE.context_turns
    window: timedelta = timedelta(hours=1)
    embed: bool = False
    next_turns: int = DEFAULT_PROFILE.context_next_turns

    @property
    def enabled(self) -> bool:
        return self.turns > 0 or self.next_turns > 0


DEFAULT_CONTEXT = ContextPolicy()


def anchor(memory: Memory) -> datetime:
    """When a memory happened: its valid_from when given, else when it was stored."""
    return memory.valid_from or memory.created_at


def same_thread(memory: Memory, earlier: Memory, window: timedelta) -> bool:
    """`earlier` is context for `memory`: same client and agent, both events, close in time."""
    return (
        memory.type in CONTEXT_TYPES
        and earlier.type in CONTEXT_TYPES
        and earlier.id != memory.id
        and earlier.client_id == memory.client_id
        and earlier.source_agent == memory.source_agent
        and abs(anchor(memory) - anchor(earlier)) <= window
        and abs(memory.created_at - earlier.created_at) <= window
    )


def thread_key(memory: Memory) -> tuple[str, str]:
    return memory.client_id, memory.source_agent


def with_context(memory: Memory, previous: list[Memory], following: list[Memory] | None = None) -> str:
    """The text to index: the memory's own index text, the mark, then the previous memories and the
    following ones (each oldest first)."""
    neighbours = [*previous, *(following or [])]
    if not neighbours:
        return memory.index_text()
    return memory.index_text() + "\n" + CONTEXT_MARK + "\n" + "\n".join(n.content for n in neighbours)


def own_text(indexed: str) -> str:
    """The memory's own part of an indexed text (what precedes the context mark)."""
    return indexed.split(CONTEXT_MARK, 1)[0].rstrip("\n")
