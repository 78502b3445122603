"""The fusion formulas of semantics.md ("Documents") and the graph walk's scoring, on hand-made inputs."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from zengram.documents.domain import fusion
from zengram.documents.domain.fusion import LegHit
from zengram.documents.domain.graph import GraphReader, candidate_names, query_intent, walk
from zengram.documents.domain.models import CodeEntity, EntityKind, Relation, RelationType


def test_hybrid_is_relative_score_fusion() -> None:
    vector = [LegHit("a", 0.8), LegHit("b", 0.4)]
    bm25 = [LegHit("b", 10.0), LegHit("c", 5.0)]
    fused = {hit.chunk_id: hit for hit in fusion.hybrid(vector, bm25, alpha=0.3, top_k=10)}
    assert fused["a"].score == pytest.approx(0.3 * 1.0)
    assert fused["b"].score == pytest.approx(0.3 * 0.5 + 0.7 * 1.0)
    assert fused["c"].score == pytest.approx(0.7 * 0.5)
    assert (fused["b"].vector, fused["b"].bm25) == (0.4, 1.0)
    assert [hit.chunk_id for hit in fusion.hybrid(vector, bm25, alpha=1.0, top_k=1)] == ["a"]


def test_multi_is_reciprocal_rank_fusion_with_k_60() -> None:
    fused = {hit.chunk_id: hit for hit in fusion.reciprocal_rank(
        [LegHit("a", 0.9), LegHit("b", 0.5)], [LegHit("b", 3.0)], [LegHit("c", 0.9), LegHit("a", 0.45)], 10)}
    assert fused["a"].score == pytest.approx(round(1 / 61 + 1 / 62, 6))
    assert fused["b"].score == pytest.approx(round(1 / 62 + 1 / 61, 6))
    assert fused["c"].score == pytest.approx(round(1 / 61, 6))
    assert (fused["a"].vector, fused["a"].bm25, fused["a"].graph) == (0.9, None, 0.45)


def test_threshold_and_bm25_normalisation() -> None:
    assert [hit.chunk_id for hit in fusion.above_threshold([LegHit("a", 0.71), LegHit("b", 0.69)], 0.7)] == ["a"]
    assert [(hit.chunk_id, hit.score) for hit in fusion.bm25_only([LegHit("a", 4.0), LegHit("b", 2.0)], 5)] == [
        ("a", 1.0), ("b", 0.5)]


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
