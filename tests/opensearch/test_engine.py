"""The OpenSearch adapter against a real engine (OpenSearch with analysis-common and k-NN on lucene): what the
engine keeps of our mapping and analyzer, k-NN with filters, BM25, aliases, bulk errors and real faults.

The port's contract (tests/contract/test_search_index.py) runs here too; these are the adapter's own promises.
Faults the engine cannot be made to produce on demand (429, 503, SigV4) stay in tests/unit/test_opensearch_requests.py.
"""

from __future__ import annotations

import copy
import json
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from zengram.adapters.opensearch import BulkWriteError, OpenSearchIndex, OpenSearchIndexError
from zengram.adapters.opensearch.mapping import Binding, index_body
from zengram.kernel.errors import IndexUnavailable
from zengram.kernel.search import IndexAttributes, IndexDocument, SearchFilters

MODEL = "test:model"
T0 = datetime(2026, 3, 1, tzinfo=UTC)
AT = T0 + timedelta(days=5)
MAPPING_FILE = Path(__file__).resolve().parents[2] / "shared/zengram/adapters/opensearch/mappings/memories.v2.json"


def unit(*values: float) -> npt.NDArray[np.float32]:
    vector = np.zeros(4, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


def attributes(**fields: Any) -> IndexAttributes:
    values: dict[str, Any] = {"type": "event", "source_agent": "claude-code", "client_id": "acme",
                              "category": "episodic", "valid_from": T0, "created_at": T0}
    return IndexAttributes(**{**values, **fields})


def document(memory_id: str, text: str = "deploy pipeline", vector: npt.NDArray[np.float32] | None = None,
             **fields: Any) -> IndexDocument:
    return IndexDocument(memory_id, text, unit(1, 0) if vector is None else vector, attributes(**fields))


def ids(hits: list[Any]) -> list[str]:
    return [hit.id for hit in hits]


def concrete(alias: str, dimension: int = 4) -> str:
    return f"{alias}-v2-{dimension}d"


@pytest.fixture
def index(make_index: Any) -> OpenSearchIndex:
    built: OpenSearchIndex = make_index()
    built.bind_model(MODEL, 4)
    return built


def source_of(engine: Any, alias: str, memory_id: str) -> dict[str, Any]:
    found: dict[str, Any] = engine.get(index=alias, id=memory_id)["_source"]
    return found


def indices_named(engine: Any, alias: str) -> list[str]:
    """The indexes whose names start with the alias (any index the adapter made, or the engine auto-created)."""
    return sorted(engine.indices.get(index=f"{alias}*"))


# -- what the engine keeps of the index definition ----------------------------------------------------------

def test_the_engine_holds_the_mapping_file_as_written(engine: Any, alias: str, index: OpenSearchIndex) -> None:
    template = json.loads(MAPPING_FILE.read_text())
    expected = copy.deepcopy(template["mappings"])
    expected["properties"]["vector"]["dimension"] = 4
    expected["_meta"] = {"mapping_version": 2, "model_id": MODEL, "dimension": 4}

    assert engine.indices.get_mapping(index=alias) == {concrete(alias): {"mappings": expected}}
    settings = engine.indices.get_settings(index=alias)[concrete(alias)]["settings"]["index"]
    assert settings["knn"] == "true"
    assert settings["analysis"] == template["settings"]["analysis"]
    assert engine.indices.get_alias(name=alias) == {concrete(alias): {"aliases": {alias: {}}}}


def test_the_analyzer_folds_accents_drops_possessives_and_stop_words_and_stems(engine: Any, alias: str,
                                                                               index: OpenSearchIndex) -> None:
    analyzed = engine.indices.analyze(index=alias, body={
        "analyzer": "english_folded", "text": "The Café Müller's deploys failed at the naïve résumé"})
    assert [token["token"] for token in analyzed["tokens"]] == ["cafe", "muller", "deploi", "fail", "naiv", "resum"]


def test_the_strict_mapping_refuses_unknown_fields(engine: Any, alias: str, index: OpenSearchIndex) -> None:
    from opensearchpy.exceptions import RequestError

    with pytest.raises(RequestError, match="strict_dynamic_mapping_exception"):
        engine.index(index=alias, id="x", body={"id": "x", "colour": "teal"})


def test_documents_are_stored_as_sent(engine: Any, alias: str, index: OpenSearchIndex) -> None:
    index.upsert([document("m2", "Café Müller", unit(0, 1), active=False, knowledge_category="meeting",
                           valid_to=T0 + timedelta(days=1), entities=("berlin", "next.js"))])

    stored = source_of(engine, alias, "m2")
    assert stored.pop("vector") == pytest.approx([0.0, 1.0, 0.0, 0.0])
    assert stored == {"id": "m2", "text": "Café Müller", "type": "event", "source_agent": "claude-code",
                      "client_id": "acme", "category": "episodic", "knowledge_category": "meeting", "active": False,
                      "valid_from": "2026-03-01T00:00:00+00:00", "valid_to": "2026-03-02T00:00:00+00:00",
                      "created_at": "2026-03-01T00:00:00+00:00", "entities": ["berlin", "next.js"]}


# -- k-NN and BM25 with filters ------------------------------------------------------------------------------

CORPUS = [
    document("fact-n8n", "deploy runbook", unit(1, 0.1), type="fact", source_agent="n8n", category="semantic",
             knowledge_category="technical", entities=("next.js",)),
    document("ended", "deploy window closed", unit(1, 0.2), valid_to=T0 + timedelta(days=3)),
    document("superseded", "deploy owner was Dana", unit(1, 0.3), active=False, valid_to=T0 + timedelta(days=10),
             entities=("berlin",)),
    document("globex-later", "deploy in Berlin", unit(1, 0.4), client_id="globex",
             valid_from=T0 + timedelta(days=6), entities=("berlin",)),
    document("plain", "deploy pipeline green", unit(1, 0.5)),
]
FILTER_CASES = [
    pytest.param(SearchFilters(), {"fact-n8n", "ended", "globex-later", "plain"}, id="active-only"),
    pytest.param(SearchFilters(include_inactive=True), {d.id for d in CORPUS}, id="include-inactive"),
    pytest.param(SearchFilters(type="fact", source_agent="n8n", client_id="acme", category="semantic",
                               knowledge_category="technical"), {"fact-n8n"}, id="every-field"),
    pytest.param(SearchFilters(at_time=AT), {"fact-n8n", "superseded", "plain"}, id="at-time"),
    pytest.param(SearchFilters(client_id="acme", entity="next.js"), {"fact-n8n"}, id="entity"),
    pytest.param(SearchFilters(at_time=AT, include_inactive=True, entity="berlin"), {"superseded"},
                 id="at-time-and-entity"),
    pytest.param(SearchFilters(client_id="initech"), set(), id="nothing-matches"),
    pytest.param(SearchFilters(client_ids=("globex", "initech")), {"globex-later"}, id="tenant-scope"),
    pytest.param(SearchFilters(client_id="acme", client_ids=("globex",)), set(), id="client-outside-tenant-scope"),
    pytest.param(SearchFilters(client_ids=()), set(), id="empty-tenant-scope"),
]


@pytest.mark.parametrize(("filters", "expected"), FILTER_CASES)
def test_both_paths_apply_the_filters_in_the_engine(index: OpenSearchIndex, filters: SearchFilters,
                                                    expected: set[str]) -> None:
    index.upsert(CORPUS)
    assert set(ids(index.vector_search(unit(1, 0), filters, k=10))) == expected
    assert set(ids(index.keyword_search("deploy", filters, k=10))) == expected


def test_the_knn_filter_is_applied_during_the_search_not_after(index: OpenSearchIndex) -> None:
    # The nearest 30 documents all belong to acme; filtering k=2 results afterwards would leave nothing.
    index.upsert([document(f"acme-{n:02}", vector=unit(1, n / 100)) for n in range(30)])
    index.upsert([document("globex-1", vector=unit(-1, 0.1), client_id="globex"),
                  document("globex-2", vector=unit(-1, 0.2), client_id="globex")])

    hits = index.vector_search(unit(1, 0), SearchFilters(client_id="globex"), k=2)
    assert ids(hits) == ["globex-2", "globex-1"]  # the less opposite one first
    assert hits[0].score == pytest.approx(float(unit(-1, 0.2) @ unit(1, 0)), abs=1e-5)


def test_keyword_search_matches_possessives_and_plurals(index: OpenSearchIndex) -> None:
    index.upsert([document("alice", "Alice's résumés were updated"), document("bob", "Bob rewrote the README")])
    assert ids(index.keyword_search("alice resume", SearchFilters(), k=5)) == ["alice"]


def test_a_query_of_stop_words_finds_nothing_without_an_error(index: OpenSearchIndex) -> None:
    index.upsert([document("a", "the deploy is done")])
    assert index.keyword_search("the", SearchFilters(), k=5) == []


def test_a_very_long_query_stays_under_the_clause_limit(engine: Any, alias: str, index: OpenSearchIndex) -> None:
    from opensearchpy.exceptions import RequestError

    index.upsert([document("x", "x marks the spot")])
    long_query = "x " * 3000
    with pytest.raises(RequestError, match="maxClauseCount"):  # what the engine does with it uncut
        engine.search(index=alias, body={"query": {"match": {"text": long_query}}})
    assert ids(index.keyword_search(long_query, SearchFilters(), k=5)) == ["x"]


# -- the alias and the concrete index ------------------------------------------------------------------------

def test_ensure_index_leaves_an_existing_index_alone(engine: Any, alias: str, index: OpenSearchIndex) -> None:
    index.upsert([document("a")])
    index.ensure_index()
    index.ensure_index()
    assert list(engine.indices.get_alias(name=alias)) == [concrete(alias)]
    assert index.count() == 1


def test_an_index_created_by_a_racing_process_gets_the_alias(engine: Any, alias: str, make_index: Any) -> None:
    body = index_body(alias, Binding(MODEL, 4), "lucene")
    del body["aliases"]  # the other process created the index and had not added the alias yet
    engine.indices.create(index=concrete(alias), body=body)

    index = make_index()
    index.bind_model(MODEL, 4)
    assert engine.indices.get_alias(name=alias) == {concrete(alias): {"aliases": {alias: {}}}}
    index.upsert([document("a")])
    assert index.count() == 1


def test_rebinding_records_the_model_in_the_engine(engine: Any, alias: str, index: OpenSearchIndex,
                                                    make_index: Any) -> None:
    index.bind_model("other:model", 4)
    assert engine.indices.get_mapping(index=alias)[concrete(alias)]["mappings"]["_meta"] == {
        "mapping_version": 2, "model_id": "other:model", "dimension": 4}
    assert make_index().model_id == "other:model"


def test_another_dimension_needs_a_clear_first(engine: Any, alias: str, index: OpenSearchIndex) -> None:
    with pytest.raises(OpenSearchIndexError, match=r"4-dimensional.*clear"):
        index.bind_model("big:model", 8)
    index.clear()
    index.bind_model("big:model", 8)
    assert list(engine.indices.get_alias(name=alias)) == [concrete(alias, 8)]
    assert not engine.indices.exists(index=concrete(alias))


def test_clear_drops_the_index_and_the_alias(engine: Any, alias: str, index: OpenSearchIndex) -> None:
    index.upsert([document("a")])
    index.clear()
    assert not engine.indices.exists(index=concrete(alias))
    assert not engine.indices.exists_alias(name=alias)
    assert (index.model_id, index.count()) == (None, 0)
    index.clear()  # nothing left to drop: no error


def test_searching_a_missing_index_finds_nothing(make_index: Any) -> None:
    index = make_index()
    assert index.vector_search(unit(1), SearchFilters(), k=5) == []
    assert index.keyword_search("deploy", SearchFilters(), k=5) == []
    assert (index.count(), index.model_id) == (0, None)


def test_a_write_into_a_deleted_index_recreates_it(engine: Any, alias: str, index: OpenSearchIndex) -> None:
    index.upsert([document("a")])
    engine.indices.delete(index=concrete(alias))

    index.upsert([document("b")])
    assert engine.indices.get_alias(name=alias) == {concrete(alias): {"aliases": {alias: {}}}}
    assert ids(index.keyword_search("deploy", SearchFilters(), k=5)) == ["b"]


def test_a_write_with_no_index_and_no_model_creates_nothing(engine: Any, alias: str, make_index: Any) -> None:
    with pytest.raises(OpenSearchIndexError, match="bind_model"):
        make_index().upsert([document("a")])
    # require_alias: the engine did not auto-create an unmapped index under the alias name
    assert indices_named(engine, alias) == []


def test_updates_and_deletes_in_a_deleted_index_are_done(engine: Any, alias: str, index: OpenSearchIndex) -> None:
    engine.indices.delete(index=concrete(alias))
    index.delete(["a"])
    index.set_attributes({"a": attributes()})
    index.set_texts({"a": "new words"})
    assert indices_named(engine, alias) == []


# -- writes --------------------------------------------------------------------------------------------------

def test_partial_updates_keep_the_other_fields(engine: Any, alias: str, index: OpenSearchIndex) -> None:
    index.upsert([document("a", "deploy pipeline", unit(0.6, 0.8))])
    index.set_attributes({"a": attributes(active=False, client_id="globex", entities=("next.js",))})
    index.set_texts({"a": "deploy pipeline\n\x1e\nrolled back on Monday"})

    stored = source_of(engine, alias, "a")
    assert stored["vector"] == pytest.approx([0.6, 0.8, 0.0, 0.0])
    assert (stored["client_id"], stored["active"], stored["entities"]) == ("globex", False, ["next.js"])
    assert stored["text"] == "deploy pipeline\n\x1e\nrolled back on Monday"


def test_unknown_ids_in_updates_and_deletes_are_ignored(index: OpenSearchIndex) -> None:
    index.upsert([document("a")])
    index.set_attributes({"ghost": attributes()})
    index.set_texts({"ghost": "boo"})
    index.delete(["ghost", "a", "a"])
    assert index.count() == 0


def test_a_document_the_engine_refuses_is_named_and_the_others_written(index: OpenSearchIndex) -> None:
    wrong_dimension = np.ones(3, dtype=np.float32) / np.sqrt(3)
    with pytest.raises(BulkWriteError, match=r"1 document\(s\): bad: 400 mapper_parsing_exception") as raised:
        index.upsert([document("a"), document("bad", vector=wrong_dimension), document("c")])
    assert raised.value.failed_ids == ["bad"]
    assert sorted(ids(index.keyword_search("deploy", SearchFilters(), k=5))) == ["a", "c"]


def test_large_batches_are_all_written(index: OpenSearchIndex) -> None:
    index.upsert([document(f"d{n:03}", vector=unit(1, n / 450)) for n in range(450)])  # three bulk requests
    assert index.count() == 450


# -- a real fault: a closed index ------------------------------------------------------------------------------

def test_a_closed_index_is_an_index_unavailable_error(engine: Any, alias: str, index: OpenSearchIndex) -> None:
    index.upsert([document("a")])
    engine.indices.close(index=concrete(alias))
    try:
        for attempt in (lambda: index.keyword_search("deploy", SearchFilters(), k=5),
                        lambda: index.vector_search(unit(1), SearchFilters(), k=5), index.count):
            with pytest.raises(IndexUnavailable, match="index_closed_exception"):
                attempt()
        with pytest.raises(BulkWriteError, match="a: 400 index_closed_exception"):
            index.upsert([document("a")])
    finally:
        engine.indices.open(index=concrete(alias), wait_for_active_shards=1)
    assert index.count() == 1


# -- server-assigned ids (how Serverless vector collections work), on a real engine ---------------------------

def test_server_assigned_ids_keep_one_copy_per_memory(make_index: Any) -> None:
    index = make_index(server_generated_ids=True)
    index.bind_model(MODEL, 4)
    index.upsert([document("a", "first words"), document("b", "other words")])
    index.upsert([document("a", "second words")])

    assert index.count() == 2
    assert index.keyword_search("first", SearchFilters(), k=5) == []
    assert ids(index.keyword_search("second", SearchFilters(), k=5)) == ["a"]
    index.set_attributes({"a": attributes(active=False)})
    assert ids(index.keyword_search("words", SearchFilters(), k=5)) == ["b"]
    index.delete(["b"])
    assert index.count() == 1


# -- connections ---------------------------------------------------------------------------------------------

def test_parallel_searches_reuse_pooled_connections(index: OpenSearchIndex, caplog: pytest.LogCaptureFixture) -> None:
    from concurrent.futures import ThreadPoolExecutor

    index.upsert([document("a")])
    with caplog.at_level(logging.WARNING, logger="urllib3.connectionpool"), ThreadPoolExecutor(4) as pool:
        # the memory service sends a search's vector and keyword paths at once, from several request threads
        list(pool.map(lambda n: index.keyword_search("deploy", SearchFilters(), k=5) if n % 2 else
                      index.vector_search(unit(1), SearchFilters(), k=5), range(40)))
    assert "Connection pool is full" not in caplog.text
