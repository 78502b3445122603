"""Index-time context from the following turns (`index_context_next_turns`): an event is found by the words of
the event stored just after it, on store, update, delete and reindex."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from zengram.assembly.containers import Container, build_container
from zengram.kernel.ports import Embedder
from zengram.kernel.search import SearchFilters
from zengram.memory.domain.context import with_context
from zengram.memory.domain.models import MemoryType
from zengram.memory.domain.requests import MemoryDraft, MemoryPatch, SearchRequest
from zengram.memory.services.indexing import EMBED_BATCH
from zengram.settings import Settings

from tests.support import HashingEmbedder, TickingClock
from tests.unit.test_search_quality import memory


def _container(tmp_path: Path, embedder: Embedder | None = None, **settings: Any) -> Container:
    options: dict[str, Any] = {"index_context_turns": 0, "index_context_next_turns": 1, "search_paths": "keyword",
                               **settings}
    return build_container(Settings(data_dir=tmp_path / "data", api_key="k", **options),
                           embedder=embedder or HashingEmbedder(), clock=TickingClock())


def _store(c: Container, content: str, client_id: str = "c1") -> str:
    return c.memory.store(MemoryDraft(type=MemoryType.EVENT, content=content, source_agent="chat",
                                      client_id=client_id)).memory.id


def _found(c: Container, query: str, client_id: str = "c1") -> set[str]:
    hits = c.memory.search(SearchRequest(q=query, client_id=client_id, limit=20)).hits
    return {hit.memory.content for hit in hits}


def test_following_turns_come_after_the_previous_ones() -> None:
    indexed = with_context(memory("reply"), [memory("q1")], [memory("n1"), memory("n2")])
    assert indexed == "reply\n\x1e\nq1\nn1\nn2"
    assert with_context(memory("reply"), [], [memory("n1")]) == "reply\n\x1e\nn1"


def test_storing_a_turn_makes_the_one_before_it_findable_by_its_words(tmp_path: Path) -> None:
    on, off = _container(tmp_path / "on"), _container(tmp_path / "off", index_context_next_turns=0)
    try:
        for c in (on, off):
            _store(c, "Melanie: I painted that lake last May")
            _store(c, "Caroline: a sunrise over the lake, gorgeous")
            _store(c, "Caroline: sunrise again", client_id="c2")
        reply = "Caroline: a sunrise over the lake, gorgeous"
        assert _found(on, "sunrise") == {"Melanie: I painted that lake last May", reply}
        assert _found(off, "sunrise") == {reply}
    finally:
        on.close()
        off.close()


def test_re_indexing_the_turn_before_reuses_its_vector(tmp_path: Path) -> None:
    embedder = HashingEmbedder()
    c = _container(tmp_path, embedder)
    try:
        _store(c, "turn alpha")
        c.index.count()  # every index call first waits for the writes queued behind their answers
        calls = embedder.calls
        _store(c, "turn bravo")
        c.index.count()
        assert embedder.calls == calls + 1  # the new turn only: "turn alpha" keeps the vector it was stored with
        assert _found(c, "bravo") == {"turn alpha", "turn bravo"}
    finally:
        c.close()


def test_only_the_next_turns_are_context_not_later_ones(tmp_path: Path) -> None:
    c = _container(tmp_path)
    try:
        for word in ("alpha", "bravo", "charlie"):
            _store(c, f"turn {word}")
        assert _found(c, "charlie") == {"turn bravo", "turn charlie"}
        assert _found(c, "bravo") == {"turn alpha", "turn bravo"}
    finally:
        c.close()


def test_changing_or_deleting_a_turn_updates_the_one_before_it(tmp_path: Path) -> None:
    c = _container(tmp_path)
    try:
        _store(c, "turn alpha")
        second = _store(c, "turn bravo")
        c.memory.update(second, MemoryPatch(content="turn delta"))
        assert _found(c, "bravo") == set()
        assert _found(c, "delta") == {"turn alpha", "turn delta"}
        c.memory.delete(second, by="test", reason=None)
        assert _found(c, "delta") == set()
    finally:
        c.close()


def test_reindex_rebuilds_the_following_context_across_batches(tmp_path: Path) -> None:
    c = _container(tmp_path)
    count = EMBED_BATCH + 6  # the follower of the batch's last turn comes in the next batch
    try:
        for n in range(count):
            _store(c, f"turn word{n} here", client_id="c1" if n % 5 else "c2")
        assert c.memory.index_sync.reindex() == count
        for n in range(1, count):
            client = "c1" if n % 5 else "c2"
            same = [m for m in range(count) if ("c1" if m % 5 else "c2") == client]
            before = [m for m in same if m < n]
            expected = {f"turn word{n} here"} | ({f"turn word{before[-1]} here"} if before else set())
            assert _found(c, f"word{n}", client) == expected, n
    finally:
        c.close()


def test_hybrid_search_tells_neighbours_apart_by_their_own_vectors(tmp_path: Path) -> None:
    c = build_container(Settings(data_dir=tmp_path / "data", api_key="k"), embedder=HashingEmbedder(),
                        clock=TickingClock())  # the defaults: hybrid, previous and next turns as keyword context
    try:
        _store(c, "deploy the billing service")
        _store(c, "billing invoices are late")
        hits = c.memory.search(SearchRequest(q="billing service", client_id="c1")).hits
        assert [hit.memory.content for hit in hits] == ["deploy the billing service", "billing invoices are late"]
    finally:
        c.close()


class CountingEmbedder:
    """Records the texts it embeds and the vectors it returns. Each call's vectors drift a little (as a real
    model's may between batches), so a re-embedded memory shows in its vector as well as in the count."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder()
        self.embedded: list[tuple[str, npt.NDArray[np.float32]]] = []

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def texts(self) -> list[str]:
        return [text for text, _ in self.embedded]

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        vectors = self.inner.embed(texts)
        vectors[:, -1] += 0.2 * (len(self.embedded) + 1)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        self.embedded += zip(texts, vectors, strict=True)
        return vectors


def _in_fresh_process(tmp_path: Path, embedder: CountingEmbedder, clock: TickingClock, content: str) -> str:
    """Stores one event (under the default settings) through a container of its own, as each Lambda instance
    does: nothing computed for an earlier store is still in memory."""
    c = build_container(Settings(data_dir=tmp_path / "data", api_key="k"), embedder=embedder, clock=clock)
    try:
        return _store(c, content)
    finally:
        c.close()


def test_storing_n_events_embeds_each_once_under_the_defaults(tmp_path: Path) -> None:
    embedder, clock = CountingEmbedder(), TickingClock()
    contents = [f"turn {word} here" for word in ("alpha", "bravo", "charlie", "delta", "echo")]
    for content in contents:
        _in_fresh_process(tmp_path, embedder, clock, content)
    assert embedder.texts == contents  # each turn before was re-indexed for its next turn, not re-embedded
    assert embedder.inner.calls == len(contents)


def test_the_turn_before_gains_the_next_turn_as_keyword_text_and_keeps_its_vector(tmp_path: Path) -> None:
    embedder, clock = CountingEmbedder(), TickingClock()
    first = _in_fresh_process(tmp_path, embedder, clock, "turn alpha here")
    (_, stored_with), = embedder.embedded
    _in_fresh_process(tmp_path, embedder, clock, "turn bravo here")
    c = build_container(Settings(data_dir=tmp_path / "data", api_key="k", search_paths="keyword"),
                        embedder=embedder, clock=clock)
    try:
        assert _found(c, "bravo") == {"turn alpha here", "turn bravo here"}
        hit = c.index.vector_search(stored_with, SearchFilters(client_id="c1"), k=1)[0]
        assert hit.id == first
        assert hit.score == pytest.approx(1.0, abs=1e-6)
    finally:
        c.close()


def test_embedded_context_still_re_embeds_the_turn_before(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    c = _container(tmp_path, embedder, index_context_embed=True)
    try:
        _store(c, "turn alpha here")
        _store(c, "turn bravo here")
        c.index.count()  # (any index call waits for the index writes behind the stores' answers)
        assert embedder.texts == ["turn alpha here", "turn bravo here", "turn alpha here\n\x1e\nturn bravo here"]
        assert _found(c, "bravo") == {"turn alpha here", "turn bravo here"}
    finally:
        c.close()
