"""What the three contexts share inside one process, built once by the host's assembly (`zengram.assembly`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from zengram.kernel.content import Scrubber
from zengram.kernel.ports import Clock, Embedder, LanguageModel, SearchIndex


@dataclass(frozen=True)
class SharedParts:
    """The clock, the credential scrubber, the search index over memories and chat memories (guarded: its outages
    answer IndexUnavailable), the embedder, the JSON language model. `ensure_index` checks the index against the
    embedder (and binds it) before its first write."""

    clock: Clock
    scrubber: Scrubber
    index: SearchIndex
    embedder: Embedder
    llm: LanguageModel
    ensure_index: Callable[[], None]


def closing(*closers: Callable[[], None]) -> Callable[[], None]:
    """One close that calls each of `closers` in turn."""

    def close_all() -> None:
        for close in closers:
            close()

    return close_all
