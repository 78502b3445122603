"""The fusion formulas of semantics.md ("Documents") and the graph walk's scoring, on hand-made inputs."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from zengram.documents.domain import fusion
from zengram.documents.domain.fusion import LegHit
from zengram.documents.domain.graph import GraphReader, candidate_names, query_intent, walk
from zengram.documents.domain.models import CodeEntity, EntityKind, Relation, RelationType
from zengram.documents.domain.relevance import LEXICAL_LIFT


def test_fuse_scores_every_candidate_by_calibrated_relevance() -> None:
    semantic = {"a": 0.8, "b": 0.4, "c": 0.1}
    bm25 = [LegHit("b", 10.0), LegHit("c", 5.0)]
    fused = fusion.fuse(["a", "b", "c"], semantic.__getitem__, bm25, [], lexical_weight=1.0)
    assert fused["a"].score == pytest.approx(0.8)  # no keyword agreement: the semantic score itself
    assert fused["b"].score == pytest.approx(0.4 + 0.6 * LEXICAL_LIFT * 1.0)
    assert fused["c"].score == pytest.approx(0.1 + 0.9 * LEXICAL_LIFT * 0.5)
    assert (fused["b"].vector, fused["b"].bm25, fused["b"].graph) == (0.4, 1.0, None)
    unweighted = fusion.fuse(["b"], semantic.__getitem__, bm25, [], lexical_weight=0.0)
    assert unweighted["b"].score == pytest.approx(0.4)
    assert [hit.chunk_id for hit in fusion.ranked(fused, 1)] == ["a"]


def test_keyword_agreement_alone_never_reaches_the_default_threshold() -> None:
    """BM25 is relative to the query's best, so its top hit always has 1.0: it may lift, not certify."""
    unrelated = fusion.fuse(["x"], lambda _: 0.2, [LegHit("x", 42.0)], [], lexical_weight=1.0)["x"]
    assert unrelated.score < 0.7


def test_a_graph_hit_scores_at_least_its_graph_score_and_multi_scores_differ() -> None:
    semantic = {"a": 0.9, "b": 0.5, "c": 0.2}
    fused = fusion.fuse(fusion.candidates([LegHit("a", 0.9), LegHit("b", 0.5)], [LegHit("b", 3.0)],
                                          [LegHit("c", 0.9), LegHit("a", 0.45)]),
                        semantic.__getitem__, [LegHit("b", 3.0)], [LegHit("c", 0.9), LegHit("a", 0.45)], 0.5)
    assert fused["c"].score == pytest.approx(0.9) and fused["a"].score == pytest.approx(0.9)
    assert fused["b"].score == pytest.approx(0.5 + 0.5 * LEXICAL_LIFT * 0.5)
    assert len({hit.score for hit in fused.values()}) > 1
    assert (fused["a"].vector, fused["a"].bm25, fused["a"].graph) == (0.9, None, 0.45)


def test_threshold_and_bm25_normalisation() -> None:
    hits = [fusion.Fused("a", 0.71), fusion.Fused("b", 0.69)]
    assert [hit.chunk_id for hit in fusion.above_threshold(hits, 0.7)] == ["a"]
    assert fusion.relative([LegHit("a", 4.0), LegHit("b", 2.0)]) == {"a": 1.0, "b": 0.5}


def test_candidate_names_prefer_code_identifiers() -> None:
    assert candidate_names("what calls compute_total?")[0] == ["compute_total"]
    assert candidate_names("who uses Cart.total")[0] == ["cart.total", "total"]
    assert candidate_names("how is the invoice total computed") == [
        ["invoice_total", "invoicetotal", "total_computed", "totalcomputed"], ["invoice", "total", "computed"]]


@pytest.mark.parametrize(("query", "types", "incoming"), [
    ("what calls compute_total", {RelationType.CALLS}, True),
    ("what does checkout call", {RelationType.CALLS}, False),
    ("who imports billing", {RelationType.IMPORTS}, True),
    ("classes that extend BaseCart", {RelationType.INHERITS, RelationType.EXTENDS}, True),
])
def test_query_intent(query: str, types: set[RelationType], incoming: bool) -> None:
    intent = query_intent(query)
    assert intent is not None and (set(intent.types), intent.incoming) == (types, incoming)
    assert query_intent("invoice totals") is None


def entity(name: str, kind: EntityKind = EntityKind.FUNCTION) -> CodeEntity:
    return CodeEntity(id=f"f.py::{name}", name=name.rsplit(".", 1)[-1], qualified_name=name, kind=kind,
                      source="f.py", chunk_id=f"chunk-{name}", language="python", line=1)


def calls(caller: str, callee: str) -> Relation:
    return Relation(type=RelationType.CALLS, source_entity=f"f.py::{caller}", source_name=caller, target=callee,
                    source="f.py", chunk_id=f"chunk-{caller}")


ENTITIES = {e.id: e for e in [entity("total"), entity("a"), entity("b"), entity("c"), entity("f", EntityKind.MODULE)]}
RELATIONS = [calls("a", "total"), calls("b", "a"), calls("c", "b"), calls("total", "helper"),
             Relation(type=RelationType.CONTAINS, source_entity="f.py::f", source_name="f", target="total",
                      source="f.py", chunk_id="chunk-f")]


def reader() -> GraphReader:
    def named(keys: Sequence[str], limit: int) -> list[CodeEntity]:
        return [e for e in ENTITIES.values() if e.name_key in keys][:limit]

    def to(keys: Sequence[str], limit: int) -> list[Relation]:
        return [r for r in RELATIONS if r.target_key in keys][:limit]

    def from_(ids: Sequence[str], limit: int) -> list[Relation]:
        return [r for r in RELATIONS if r.source_entity in ids][:limit]

    return GraphReader(named=named, entities=lambda ids: {i: ENTITIES[i] for i in ids if i in ENTITIES},
                       relations_to=to, relations_from=from_)


def test_walk_scores_callers_first_and_stops_at_the_depth() -> None:
    intent = query_intent("what calls total")
    hits = {hit.chunk_id: hit.score for hit in walk([ENTITIES["f.py::total"]], 2, intent, reader())}
    assert hits == {"chunk-total": 0.85, "chunk-a": 0.9, "chunk-b": pytest.approx(0.81),
                    "chunk-f": 0.45}  # the module is reached (CONTAINS) but not walked through
    deeper = {hit.chunk_id for hit in walk([ENTITIES["f.py::total"]], 3, intent, reader())}
    assert "chunk-c" in deeper
    plain = {hit.chunk_id: hit.score for hit in walk([ENTITIES["f.py::total"]], 1, None, reader())}
    assert plain == {"chunk-total": 1.0, "chunk-a": 0.45, "chunk-f": 0.45}
