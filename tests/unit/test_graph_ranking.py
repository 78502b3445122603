"""The graph path's ranking (zengram.memory.domain.graph): named entities, one hop, memories by summed scores."""

from __future__ import annotations

import pytest
from zengram.memory.domain.entities import RelatedEntity
from zengram.memory.domain.graph import GraphPolicy, entity_scores, rank_memories

WEIGHTS = GraphPolicy(hop_decay=0.5, neighbour_limit=3)


def test_named_entities_score_one_and_neighbours_decay_with_edge_strength() -> None:
    edges = {"postgresql": [RelatedEntity(name="Redis", strength=8), RelatedEntity(name="Kafka", strength=2)]}
    assert entity_scores(["postgresql"], edges, WEIGHTS) == {
        "postgresql": 1.0, "redis": pytest.approx(0.5), "kafka": pytest.approx(0.125)}


def test_only_the_strongest_edges_of_all_named_entities_are_followed() -> None:
    edges = {
        "postgresql": [RelatedEntity(name="Redis", strength=9), RelatedEntity(name="Kafka", strength=1)],
        "aws": [RelatedEntity(name="Amazon S3", strength=6), RelatedEntity(name="Terraform", strength=3)],
    }
    scores = entity_scores(["postgresql", "aws"], edges, WEIGHTS)
    assert set(scores) == {"postgresql", "aws", "redis", "amazon s3", "terraform"}  # Kafka's edge is the 4th
    assert scores["terraform"] == pytest.approx(0.5 * 3 / 9)


def test_a_neighbour_never_lowers_or_outranks_a_named_entity() -> None:
    edges = {"postgresql": [RelatedEntity(name="AWS", strength=5)],
             "aws": [RelatedEntity(name="PostgreSQL", strength=5)]}
    assert entity_scores(["postgresql", "aws"], edges, WEIGHTS) == {"postgresql": 1.0, "aws": 1.0}
    assert entity_scores(["postgresql"], edges, GraphPolicy(hop_decay=1.0, neighbour_limit=3))["aws"] == 1.0


def test_no_edges_or_no_hop_leaves_the_named_entities() -> None:
    assert entity_scores(["redis"], {}, WEIGHTS) == {"redis": 1.0}
    edges = {"redis": [RelatedEntity(name="Kafka", strength=4)]}
    assert entity_scores(["redis"], edges, GraphPolicy(hop_decay=0.5, neighbour_limit=0)) == {"redis": 1.0}


def test_memories_score_the_sum_of_their_entities_ties_in_first_seen_order() -> None:
    scores = {"postgresql": 1.0, "redis": 0.5}
    links = [("postgresql", ["m3", "m1", "m2"]), ("redis", ["m4", "m1", "m1"])]
    assert rank_memories(scores, links) == [("m1", 1.5), ("m3", 1.0), ("m2", 1.0), ("m4", 0.5)]
    assert rank_memories(scores, []) == []


def test_no_hop_lands_on_a_writers_client_or_agent_unless_the_query_names_it() -> None:
    edges = {"postgresql": [RelatedEntity(name="acme-corp", strength=40), RelatedEntity(name="Redis", strength=4)],
             "acme-corp": [RelatedEntity(name="Redis", strength=4)]}
    hubs = {"acme-corp"}
    scores = entity_scores(["postgresql"], edges, WEIGHTS, hubs=hubs)
    assert scores == {"postgresql": 1.0, "redis": pytest.approx(0.5)}  # the hub's 40 does not scale Redis down
    assert entity_scores(["postgresql", "acme-corp"], edges, WEIGHTS, hubs=hubs)["acme-corp"] == 1.0
