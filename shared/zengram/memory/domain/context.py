"""Index-time context: a memory indexed together with the memory its author stored just before it.

A conversation turn often answers the turn before it ("Yes! Last year." after "Did you paint that?"), so
on its own it shares few words, and little meaning, with a question about it. Indexing each event with the
previous event of the same client and agent, when both fall inside a short window, lets both the keyword
and the vector path find it. The turn after it helps the same way ("When did you paint that?" → "I painted it
last May." → "Wow, May already!"), so an event can also be indexed with the events that follow it; those are
added when they are stored. Pure functions; `IndexSync` reads the neighbours from the record store.

A memory's context is its nearest events in its thread, in stored order (`created_at`, then id): the `turns`
just before it and the `next_turns` just after it, each kept only when within the window. Nearest first, then
the window: so the store only ever needs to hand over those few neighbours (`RecordStore.thread_neighbours`),
whatever the length of the thread.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from zengram.memory.domain.models import Memory, MemoryType
from zengram.memory.domain.retrieval import DEFAULT_PROFILE

CONTEXT_TYPES = frozenset({MemoryType.EVENT})
# Separates a memory's own text from its context in the indexed text. A control character: tokenizers
# treat it as a word break, and `own_text` cuts there so entity filters match the memory's own words only.
CONTEXT_MARK = "\x1e"


@dataclass(frozen=True)
class ContextPolicy:
    """`turns` previous and `next_turns` following memories (0: off) within `window` of each other; `embed`: the
    vector sees them too. The defaults are the product's: turns from the default retrieval profile
    (`zengram.memory.domain.retrieval`), window and embed from here (Settings takes them from here)."""

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


@dataclass(frozen=True)
class Neighbours:
    """A memory's nearest live events in its thread: `previous` stored just before it, `following` just after
    it, each oldest first."""

    previous: list[Memory] = field(default_factory=list)
    following: list[Memory] = field(default_factory=list)


def stored_order(memory: Memory) -> tuple[datetime, str]:
    """Where a memory sits in its thread: `created_at` as stores keep it (milliseconds), then id."""
    created = memory.created_at
    return created.replace(microsecond=created.microsecond // 1000 * 1000), memory.id


def context_of(memory: Memory, candidates: Iterable[Memory], policy: ContextPolicy) -> Neighbours:
    """`memory`'s context among `candidates` (any memories; duplicates and other threads are ignored): its
    `turns` nearest events before it and `next_turns` nearest after it, each kept only when `same_thread`."""
    if memory.type not in CONTEXT_TYPES:
        return Neighbours()
    key, position = thread_key(memory), stored_order(memory)
    thread = {c.id: c for c in candidates
              if c.type in CONTEXT_TYPES and thread_key(c) == key and c.id != memory.id}
    ordered = sorted(thread.values(), key=stored_order)
    before = [c for c in ordered if stored_order(c) < position][-policy.turns:] if policy.turns else []
    after = [c for c in ordered if stored_order(c) > position][: policy.next_turns]
    return Neighbours(previous=[c for c in before if same_thread(memory, c, policy.window)],
                      following=[c for c in after if same_thread(c, memory, policy.window)])


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
