"""Search-quality switches: retrieval paths, read-only searches, and index-time conversation context."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from zengram.assembly.containers import Container, build_container
from zengram.memory.domain.context import ContextPolicy, own_text, same_thread, with_context
from zengram.memory.domain.models import Memory, MemoryType
from zengram.memory.domain.requests import MemoryDraft, SearchRequest
from zengram.settings import Settings

from tests.support import HashingEmbedder, TickingClock

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def memory(content: str, *, at: datetime = T0, **fields: Any) -> Memory:
    return Memory(id=fields.pop("id", content), type=fields.pop("type", MemoryType.EVENT), content=content,
                  content_hash=content, source_agent=fields.pop("source_agent", "agent"),
                  client_id=fields.pop("client_id", "c1"), created_at=at, updated_at=at, last_observed_at=at,
                  **fields)


def container(tmp_path: Path, **settings: Any) -> Container:
    return build_container(Settings(data_dir=tmp_path / "data", api_key="k", **settings),
                           embedder=HashingEmbedder(), clock=TickingClock())


def draft(content: str, **fields: Any) -> MemoryDraft:
    return MemoryDraft(type=fields.pop("type", MemoryType.EVENT), content=content, source_agent="agent",
                       client_id=fields.pop("client_id", "c1"), **fields)


def contents(c: Container, query: str) -> list[str]:
    return [hit.memory.content for hit in c.memory.search(SearchRequest(q=query, client_id="c1", limit=10)).hits]


def test_same_thread_needs_same_client_agent_type_and_time() -> None:
    window = timedelta(hours=1)
    now = memory("b", at=T0 + timedelta(minutes=5))
    assert same_thread(now, memory("a"), window)
    assert not same_thread(now, memory("a", client_id="c2"), window)
    assert not same_thread(now, memory("a", source_agent="other"), window)
    assert not same_thread(now, memory("a", type=MemoryType.FACT), window)
    assert not same_thread(now, memory("a", at=T0 - timedelta(hours=2)), window)
    assert not same_thread(now, memory("a", valid_from=T0 - timedelta(days=3)), window)


def test_with_context_puts_previous_turns_first() -> None:
    assert with_context(memory("reply"), []) == "reply"
    indexed = with_context(memory("reply"), [memory("q1"), memory("q2")])
    assert indexed == "reply\n\x1e\nq1\nq2"
    assert own_text(indexed) == "reply"


def test_context_off_without_turns_and_on_by_default() -> None:
    assert not ContextPolicy(turns=0, next_turns=0).enabled
    assert ContextPolicy(turns=1, next_turns=0).enabled
    assert ContextPolicy().enabled  # the default retrieval profile ("conversation") indexes neighbouring turns


def test_a_reply_is_found_by_the_turn_it_answers(tmp_path: Path) -> None:
    with_context_on = container(tmp_path / "on", index_context_turns=1, search_paths="keyword")
    with_context_off = container(tmp_path / "off", index_context_turns=0, search_paths="keyword")
    for c in (with_context_on, with_context_off):
        c.memory.store(draft("Did you finish the pottery workshop?"))
        c.memory.store(draft("Yes, last Friday, loved it"))
        c.memory.store(draft("unrelated note about invoices", client_id="c2"))
    try:
        assert "Yes, last Friday, loved it" in contents(with_context_on, "pottery workshop")
        assert "Yes, last Friday, loved it" not in contents(with_context_off, "pottery workshop")
    finally:
        with_context_on.close()
        with_context_off.close()


def test_context_survives_reindex(tmp_path: Path) -> None:
    c = container(tmp_path, index_context_turns=1, search_paths="keyword")
    try:
        c.memory.store(draft("Did you finish the pottery workshop?"))
        c.memory.store(draft("Yes, last Friday, loved it"))
        c.memory.store(draft("The kiln broke", client_id="c2"))
        assert c.memory.index_sync.reindex() == 3
        assert "Yes, last Friday, loved it" in contents(c, "pottery workshop")
    finally:
        c.close()


def test_single_path_searches(tmp_path: Path) -> None:
    # No conversation context: with it, two neighbouring events share their keyword text (a tie here).
    keyword = container(tmp_path / "k", search_paths="keyword", index_context_turns=0, index_context_next_turns=0)
    vector = container(tmp_path / "v", search_paths="vector")
    try:
        for c in (keyword, vector):
            c.memory.store(draft("deploy the billing service"))
            c.memory.store(draft("billing invoices are late"))
        result = keyword.memory.search(SearchRequest(q="billing service", client_id="c1"))
        assert result.path_counts.keys() == {"keyword"}
        assert result.hits[0].memory.content == "deploy the billing service"
        assert result.hits[0].score > result.hits[1].score
        assert vector.memory.search(SearchRequest(q="billing", client_id="c1")).path_counts.keys() == {"vector"}
    finally:
        keyword.close()
        vector.close()


def test_reinforcement_can_be_switched_off(tmp_path: Path) -> None:
    c = container(tmp_path, reinforce_on_search=False)
    try:
        stored = c.memory.store(draft("deploy the billing service")).memory
        c.memory.reinforce([stored.id])
        assert c.memory.get(stored.id).access_count == 0
    finally:
        c.close()


def test_entity_filter_ignores_the_context(tmp_path: Path) -> None:
    c = container(tmp_path, index_context_turns=1)
    try:
        kubernetes = c.memory.store(draft("Kubernetes is the new cluster")).memory
        reply = c.memory.store(draft("great, ship it")).memory
        hits = c.memory.search(SearchRequest(q="anything", client_id="c1", entity="Kubernetes")).hits
        assert kubernetes.id in [hit.memory.id for hit in hits]
        assert reply.id not in [hit.memory.id for hit in hits]
    finally:
        c.close()
