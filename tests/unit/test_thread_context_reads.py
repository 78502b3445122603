"""Index-time conversation context costs bounded work: a write reads the few neighbours its context takes, from
the record store's thread index, never a page of its thread, however long the thread has grown."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from zengram.assembly.containers import Container, build_container
from zengram.memory.domain.context import ContextPolicy, Neighbours, context_of
from zengram.memory.domain.models import Memory, MemoryType
from zengram.memory.domain.requests import MemoryDraft, MemoryPatch, SearchRequest
from zengram.settings import Settings

from tests.support import HashingEmbedder, TickingClock
from tests.unit.test_search_quality import T0, memory

LONG_THREAD = 600  # more than the 500-record page the context used to read per write


class ReadCounter:
    """Counts the memories the record store hands out, by method."""

    def __init__(self, container: Container, monkeypatch: pytest.MonkeyPatch) -> None:
        self.read: dict[str, int] = {}
        store = container.records
        for name in ("get", "get_many", "query", "iter_all", "thread_neighbours", "find_active_duplicate"):
            monkeypatch.setattr(store, name, self._counting(name, getattr(store, name)))

    def _counting(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            result = method(*args, **kwargs)
            if isinstance(result, Iterator):
                result = list(result)
                self.read[name] = self.read.get(name, 0) + len(result)
                return iter(result)
            self.read[name] = self.read.get(name, 0) + _size(result)
            return result
        return counted

    def during(self, action: Callable[[], object]) -> dict[str, int]:
        before = dict(self.read)
        action()
        return {name: count - before.get(name, 0) for name, count in self.read.items() if count != before.get(name, 0)}


def _size(result: Any) -> int:
    if result is None:
        return 0
    if isinstance(result, Neighbours):
        return len(result.previous) + len(result.following)
    if isinstance(result, (list, dict)):
        return len(result)
    return 1


def _container(tmp_path: Path) -> Container:
    # The defaults: 2 previous turns and 1 next turn of keyword context, in a 60-minute window.
    return build_container(Settings(data_dir=tmp_path / "data", api_key="k"), embedder=HashingEmbedder(),
                           clock=TickingClock())


def _draft(n: int) -> MemoryDraft:
    return MemoryDraft(type=MemoryType.EVENT, content=f"turn {n} of a long chat, word{n}", source_agent="chat",
                       client_id="c1")


def test_a_write_reads_the_same_few_records_however_long_its_thread(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    c = _container(tmp_path)
    try:
        counter = ReadCounter(c, monkeypatch)
        c.memory.store_many([_draft(n) for n in range(3)])
        short = counter.during(lambda: c.memory.store(_draft(3)))
        for start in range(4, LONG_THREAD, 200):  # all inside the context window (the clock ticks 1 ms a read)
            c.memory.store_many([_draft(n) for n in range(start, min(start + 200, LONG_THREAD))])
        long = counter.during(lambda: c.memory.store(_draft(LONG_THREAD)))
        assert long == short
        assert "query" not in long and "iter_all" not in long
        # One read for its own context and that of the turn before it, which gains it as its next turn: the 3
        # turns before it (2 of its own context; the one just before and that one's 2 before).
        assert long["thread_neighbours"] == 3
        hits = c.memory.search(SearchRequest(q=f"word{LONG_THREAD}", client_id="c1")).hits
        assert {hit.memory.content for hit in hits[:2]} == {_draft(LONG_THREAD).content,
                                                            _draft(LONG_THREAD - 1).content}
    finally:
        c.close()


def test_changing_or_deleting_a_turn_of_a_long_thread_reads_only_its_neighbours(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    c = _container(tmp_path)
    try:
        for start in range(0, LONG_THREAD, 200):
            c.memory.store_many([_draft(n) for n in range(start, start + 200)])
        counter = ReadCounter(c, monkeypatch)
        target = next(m for m in c.records.iter_all() if m.content == _draft(300).content)
        changed = counter.during(lambda: c.memory.update(target.id, MemoryPatch(content="turn 300 rewritten")))
        deleted = counter.during(lambda: c.memory.delete(target.id, by="test", reason=None))
        for reads in (changed, deleted):
            assert "query" not in reads and "iter_all" not in reads
        # The turns whose context holds it (1 before, 2 after), then each one's context anew (2 before, 1 after);
        # a changed text also gets its own context (2 before, 1 after).
        assert (changed["thread_neighbours"], deleted["thread_neighbours"]) == (3 + 3 * 3 + 3, 3 + 3 * 3)
        hits = c.memory.search(SearchRequest(q="rewritten", client_id="c1")).hits
        assert [hit for hit in hits if "keyword" in hit.sources] == []  # no neighbour keeps the deleted words
    finally:
        c.close()


def _turn(content: str, minutes: float, **fields: Any) -> Memory:
    return memory(content, at=T0 + timedelta(minutes=minutes), **fields)


def test_context_is_the_nearest_turns_each_kept_within_the_window() -> None:
    policy = ContextPolicy(turns=2, next_turns=1, window=timedelta(hours=1))
    old, a, b, now, c, d = (_turn("old", -120), _turn("a", -2), _turn("b", -1), _turn("now", 0), _turn("c", 1),
                            _turn("d", 2))
    other_agent, fact = _turn("x", -0.5, source_agent="other"), _turn("f", -0.5, type=MemoryType.FACT)
    found = context_of(now, [d, c, b, a, old, other_agent, fact, now, b], policy)
    assert (found.previous, found.following) == ([a, b], [c])
    # Nearest first, then the window: a turn out of the window hides none beyond it (there is none nearer).
    assert context_of(a, [old, b], policy) == Neighbours(previous=[], following=[b])
    long_ago = _turn("same session", -0.1, valid_from=T0 - timedelta(days=3))
    assert context_of(now, [a, long_ago], policy).previous == [a]  # only a: long_ago is near in storage, not in time
    assert context_of(fact, [a, b, now], policy) == Neighbours()
