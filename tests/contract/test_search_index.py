"""The `SearchIndex` contract (see zengram.memory.ports.SearchIndex), for every adapter."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from zengram.kernel.ports import SearchIndex
from zengram.kernel.search import IndexAttributes, IndexDocument, SearchFilters

from tests.support import HashingEmbedder

T0 = datetime(2026, 3, 1, tzinfo=UTC)
EMBEDDER = HashingEmbedder(dimension=32)


def unit(*values: float) -> npt.NDArray[np.float32]:
    vector = np.zeros(32, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


def attributes(**fields: Any) -> IndexAttributes:
    values: dict[str, Any] = {"type": "event", "source_agent": "claude-code", "client_id": "acme",
                              "category": "episodic", "valid_from": T0, "created_at": T0}
    values.update(fields)
    return IndexAttributes(**values)


def document(memory_id: str, text: str, vector: npt.NDArray[np.float32] | None = None,
             **fields: Any) -> IndexDocument:
    return IndexDocument(memory_id, text, EMBEDDER.embed([text])[0] if vector is None else vector,
                         attributes(**fields))


@pytest.fixture
def index(search_index: SearchIndex) -> SearchIndex:
    search_index.bind_model(EMBEDDER.model_id, EMBEDDER.dimension)
    return search_index


def ids(hits: list[Any]) -> list[str]:
    return [hit.id for hit in hits]


def test_model_binding_is_remembered(search_index: SearchIndex) -> None:
    assert search_index.model_id is None
    search_index.bind_model("test:model", 32)
    assert search_index.model_id == "test:model"
    search_index.clear()
    assert search_index.model_id is None


def test_vector_search_ranks_by_cosine_and_respects_k(index: SearchIndex) -> None:
    index.upsert([document("near", "a", unit(1, 0.1)), document("far", "b", unit(0, 1)),
                  document("mid", "c", unit(1, 1)), document("opposite", "d", unit(-1, 0))])
    hits = index.vector_search(unit(1, 0), SearchFilters(), k=3)
    assert ids(hits) == ["near", "mid", "far"]
    assert hits[0].score == pytest.approx(float(unit(1, 0.1) @ unit(1, 0)), abs=1e-5)
    assert all(-1.0 <= hit.score <= 1.0 for hit in hits)
    assert index.vector_search(unit(1, 0), SearchFilters(), k=10)[-1].score == pytest.approx(-1.0, abs=1e-5)


def test_vector_ties_break_by_id(index: SearchIndex) -> None:
    index.upsert([document(name, "same", unit(1, 0)) for name in ("b", "c", "a")])
    assert ids(index.vector_search(unit(1, 0), SearchFilters(), k=3)) == ["a", "b", "c"]


def test_keyword_search_ranks_by_bm25(index: SearchIndex) -> None:
    index.upsert([
        document("deploy", "The deploy pipeline failed on Friday because of a flaky test"),
        document("deploys", "Deploys happen daily; the pipeline deploys to staging then production"),
        document("lunch", "Team lunch moved to Thursday"),
    ])
    hits = index.keyword_search("deploy pipeline", SearchFilters(), k=10)
    assert set(ids(hits)) == {"deploy", "deploys"}
    assert all(hit.score > 0 for hit in hits)
    assert hits[0].score >= hits[1].score
    assert index.keyword_search("!!! ???", SearchFilters(), k=10) == []
    assert ids(index.keyword_search("thursday", SearchFilters(), k=10)) == ["lunch"]


def test_keyword_search_stems_and_folds_accents(index: SearchIndex) -> None:
    index.upsert([document("cafe", "Meetings were held at the Café Müller"),
                  document("other", "Nothing relevant here")])
    assert ids(index.keyword_search("meeting cafe muller", SearchFilters(), k=5)) == ["cafe"]


@pytest.mark.parametrize(("field", "value"), [
    ("type", "fact"), ("source_agent", "n8n"), ("client_id", "globex"), ("category", "semantic"),
    ("knowledge_category", "technical"),
])
def test_each_filter_applies_to_both_paths(index: SearchIndex, field: str, value: str) -> None:
    index.upsert([document("plain", "release notes for version two"),
                  document("match", "release notes for version two", **{field: value})])
    filters = SearchFilters(**{field: value})
    assert ids(index.vector_search(EMBEDDER.embed(["release notes"])[0], filters, k=10)) == ["match"]
    assert ids(index.keyword_search("release notes", filters, k=10)) == ["match"]
    assert index.keyword_search("release", SearchFilters(**{field: "no-such-value"}), k=10) == []


def test_a_tenant_scope_keeps_its_clients_only_on_both_paths(index: SearchIndex) -> None:
    index.upsert([document(client, "release notes for version two", client_id=client)
                  for client in ("acme", "globex", "initech", "global")])
    query = EMBEDDER.embed(["release notes"])[0]
    for scope, expected in [(("acme", "global"), {"acme", "global"}), (("initech",), {"initech"}),
                            (("nobody",), set()), ((), set()), (("acme", "nobody"), {"acme"})]:
        filters = SearchFilters(client_ids=scope)
        assert set(ids(index.vector_search(query, filters, k=10))) == expected, scope
        assert set(ids(index.keyword_search("release notes", filters, k=10))) == expected, scope
    both = SearchFilters(client_id="globex", client_ids=("acme", "globex"))
    assert ids(index.keyword_search("release", both, k=10)) == ["globex"]
    assert index.vector_search(query, SearchFilters(client_id="initech", client_ids=("acme",)), k=10) == []


def test_a_search_sees_zengram_memories_unless_it_names_other_scopes(index: SearchIndex) -> None:
    index.upsert([document("memory", "the deploy pipeline failed"),
                  document("alice", "the deploy pipeline is alice's", scope="chat:alice"),
                  document("bob", "the deploy pipeline is bob's", scope="chat:bob")])
    for search in (lambda f: index.vector_search(EMBEDDER.embed(["deploy pipeline"])[0], f, 10),
                   lambda f: index.keyword_search("deploy pipeline", f, 10)):
        assert ids(search(SearchFilters())) == ["memory"]
        assert set(ids(search(SearchFilters(scopes=("chat:alice",))))) == {"alice"}
        assert set(ids(search(SearchFilters(scopes=("chat:alice", "chat:bob"))))) == {"alice", "bob"}
        assert set(ids(search(SearchFilters(scopes=("", "chat:bob"))))) == {"memory", "bob"}
        assert search(SearchFilters(scopes=())) == []
        assert search(SearchFilters(scopes=("chat:nobody",))) == []


def test_set_attributes_moves_a_document_between_scopes(index: SearchIndex) -> None:
    index.upsert([document("note", "quarterly planning notes", scope="chat:alice")])
    index.set_attributes({"note": attributes(scope="chat:team")})
    vector = EMBEDDER.embed(["quarterly planning"])[0]
    assert index.vector_search(vector, SearchFilters(scopes=("chat:alice",)), 5) == []
    assert ids(index.vector_search(vector, SearchFilters(scopes=("chat:team",)), 5)) == ["note"]
    assert ids(index.keyword_search("quarterly planning", SearchFilters(scopes=("chat:team",)), 5)) == ["note"]


def test_inactive_documents_only_when_asked(index: SearchIndex) -> None:
    index.upsert([document("live", "budget approved"), document("old", "budget approved", active=False)])
    query = EMBEDDER.embed(["budget"])[0]
    assert ids(index.vector_search(query, SearchFilters(), k=10)) == ["live"]
    assert set(ids(index.keyword_search("budget", SearchFilters(include_inactive=True), k=10))) == {"live", "old"}


def test_at_time_keeps_documents_valid_then(index: SearchIndex) -> None:
    index.upsert([
        document("first", "office in Berlin", valid_from=T0, valid_to=T0 + timedelta(days=10), active=False),
        document("second", "office in Lisbon", valid_from=T0 + timedelta(days=10)),
    ])
    on_day_5 = SearchFilters(at_time=T0 + timedelta(days=5))
    on_day_10 = SearchFilters(at_time=T0 + timedelta(days=10))
    assert ids(index.keyword_search("office", on_day_5, k=10)) == ["first"]
    assert ids(index.keyword_search("office", on_day_10, k=10)) == ["second"]
    assert ids(index.vector_search(EMBEDDER.embed(["office"])[0], on_day_5, k=10)) == ["first"]
    assert index.keyword_search("office", SearchFilters(at_time=T0 - timedelta(days=1)), k=10) == []


def test_date_window_keeps_documents_by_valid_from_bounds_included(index: SearchIndex) -> None:
    index.upsert([document(f"day-{day}", "standup notes", valid_from=T0 + timedelta(days=day), created_at=T0)
                  for day in (0, 3, 7, 10)])
    query = EMBEDDER.embed(["standup"])[0]
    week = SearchFilters(date_from=T0 + timedelta(days=3), date_to=T0 + timedelta(days=7))
    assert set(ids(index.keyword_search("standup", week, k=10))) == {"day-3", "day-7"}
    assert set(ids(index.vector_search(query, week, k=10))) == {"day-3", "day-7"}
    since = SearchFilters(date_from=T0 + timedelta(days=7, seconds=1))
    assert ids(index.keyword_search("standup", since, k=10)) == ["day-10"]
    until = SearchFilters(date_to=T0 + timedelta(hours=1))
    assert ids(index.vector_search(query, until, k=10)) == ["day-0"]
    empty = SearchFilters(date_from=T0 + timedelta(days=20))
    assert index.keyword_search("standup", empty, k=10) == []
    assert index.vector_search(query, empty, k=10) == []


def test_entity_filter_keeps_documents_holding_that_entity_key(index: SearchIndex) -> None:
    index.upsert([document("next", "Acme migrated to Next.js 15", entities=("next.js", "acme-corp")),
                  document("js", "Next week Acme ships the JS SDK next", entities=("javascript",)),
                  document("none", "Acme migration notes about next.js")])  # the text alone is not enough
    filters = SearchFilters(entity="next.js")
    assert ids(index.vector_search(EMBEDDER.embed(["migration"])[0], filters, k=10)) == ["next"]
    assert ids(index.keyword_search("acme", filters, k=10)) == ["next"]
    assert index.keyword_search("acme", SearchFilters(entity="next"), k=10) == []  # whole keys only


def test_set_attributes_moves_the_entity_filter(index: SearchIndex) -> None:
    index.upsert([document("a", "quarterly roadmap review", entities=("postgresql",))])
    index.set_attributes({"a": attributes(entities=("mysql",))})
    assert index.keyword_search("roadmap", SearchFilters(entity="postgresql"), k=5) == []
    assert ids(index.keyword_search("roadmap", SearchFilters(entity="mysql"), k=5)) == ["a"]
    assert ids(index.vector_search(EMBEDDER.embed(["roadmap"])[0], SearchFilters(entity="mysql"), k=5)) == ["a"]


def test_set_attributes_changes_filters_only(index: SearchIndex) -> None:
    index.upsert([document("a", "quarterly roadmap review")])
    index.set_attributes({"a": attributes(active=False, client_id="globex"), "unknown": attributes()})
    assert index.keyword_search("roadmap", SearchFilters(), k=5) == []
    assert ids(index.keyword_search("roadmap", SearchFilters(client_id="globex", include_inactive=True), k=5)) == ["a"]
    assert index.count() == 1


def test_set_texts_replaces_the_keyword_text_only(index: SearchIndex) -> None:
    vector = unit(1, 0.2)
    index.upsert([document("a", "old words about pricing", vector, client_id="globex"),
                  document("b", "new words about hiring", unit(0, 1), client_id="globex")])
    index.set_texts({"a": "new words about hiring", "unknown": "ghost words"})
    assert index.keyword_search("pricing", SearchFilters(include_inactive=True), k=5) == []
    assert index.keyword_search("ghost", SearchFilters(include_inactive=True), k=5) == []
    a, b = sorted(index.keyword_search("hiring", SearchFilters(client_id="globex"), k=5), key=lambda hit: hit.id)
    assert (a.id, b.id) == ("a", "b")
    assert a.score == pytest.approx(b.score)  # scored exactly as if upserted with that text
    nearest = index.vector_search(vector, SearchFilters(client_id="globex"), k=1)  # vector and filters kept
    assert ids(nearest) == ["a"]
    assert nearest[0].score == pytest.approx(1.0, abs=1e-5)
    assert index.count() == 2


def test_upsert_with_texts_also_replaces_those_keyword_texts(index: SearchIndex) -> None:
    """A write's new memory and its predecessor's new context text in one call (one transaction embedded)."""
    index.upsert([document("a", "old words about pricing", unit(1, 0.2))])
    index.upsert([document("b", "words about hiring", unit(0, 1))],
                 {"a": "old words about pricing then hiring", "unknown": "ghost words"})
    assert index.keyword_search("ghost", SearchFilters(include_inactive=True), k=5) == []
    assert sorted(ids(index.keyword_search("hiring", SearchFilters(), k=5))) == ["a", "b"]
    assert ids(index.keyword_search("pricing", SearchFilters(), k=5)) == ["a"]
    assert ids(index.vector_search(unit(1, 0.2), SearchFilters(), k=1)) == ["a"]  # a's vector kept
    assert index.count() == 2


def test_upsert_replaces_and_delete_removes(index: SearchIndex) -> None:
    index.upsert([document("a", "old words about pricing")])
    index.upsert([document("a", "new words about hiring")])
    assert index.keyword_search("pricing", SearchFilters(), k=5) == []
    assert ids(index.keyword_search("hiring", SearchFilters(), k=5)) == ["a"]
    assert index.count() == 1
    index.delete(["a", "never-existed"])
    assert index.keyword_search("hiring", SearchFilters(), k=5) == []
    assert index.vector_search(EMBEDDER.embed(["hiring"])[0], SearchFilters(), k=5) == []
    assert index.count() == 0


def test_clear_empties_everything(index: SearchIndex) -> None:
    index.upsert([document(f"d{i}", f"note number {i}") for i in range(5)])
    index.clear()
    assert index.count() == 0
    index.bind_model(EMBEDDER.model_id, EMBEDDER.dimension)
    assert index.keyword_search("note", SearchFilters(), k=5) == []
    assert index.vector_search(EMBEDDER.embed(["note"])[0], SearchFilters(), k=5) == []


def test_the_adapter_is_a_search_index(search_index: SearchIndex) -> None:
    assert isinstance(search_index, SearchIndex)
