"""GET /memory/search: validation, formats, filters, tenants, supersede, at_time, ranking, reinforcement."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.helpers import assert_error, get, search, search_ids, store
from tests.support import TickingClock

CORPUS: list[dict[str, Any]] = [
    {"content": "The billing service stores invoices in PostgreSQL 16 on Amazon RDS", "type": "fact",
     "client_id": "acme-corp", "key": "acme-billing-db", "category": "semantic", "knowledge_category": "technical",
     "importance": "high"},
    {"content": "Acme's marketing team wants a bolder brand palette with teal accents", "type": "event",
     "client_id": "acme-corp", "source_agent": "n8n", "knowledge_category": "brand"},
    {"content": "Globex's main contact is Hank Scorpio, VP of Operations", "type": "fact", "client_id": "globex",
     "key": "globex-contact", "category": "semantic", "knowledge_category": "relationship"},
    {"content": "We decided to ship the mobile app with React Native instead of Flutter", "type": "decision",
     "category": "procedural", "knowledge_category": "strategy", "source_agent": "cursor"},
    {"content": "Weekly sync with Initech moved to Thursday afternoons", "type": "event", "client_id": "initech",
     "knowledge_category": "meeting"},
    {"content": "Deploy pipeline is green after fixing the flaky Next.js build cache", "type": "status",
     "subject": "deploy-pipeline", "status_value": "green", "client_id": "acme-corp"},
]


def store_corpus(client: TestClient) -> list[dict[str, Any]]:
    """Stores CORPUS; returns each entry with its new id."""
    return [{**entry, "id": store(client, **entry)["id"]} for entry in CORPUS]


@pytest.fixture(scope="module")
def corpus(shared_client: TestClient) -> list[dict[str, Any]]:
    """CORPUS in the module's shared app, for tests whose assertions do not depend on access counts."""
    return store_corpus(shared_client)


# -- validation ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "q"),
        ({"q": ""}, "q"),
        ({"q": "   "}, "q"),
        ({"q": "x" * 2_001}, "q"),
        ({"q": "deploy", "limit": 0}, "limit"),
        ({"q": "deploy", "limit": -1}, "limit"),
        ({"q": "deploy", "limit": 101}, "limit"),
        ({"q": "deploy", "limit": "ten"}, "limit"),
        ({"q": "deploy", "type": "note"}, "type"),
        ({"q": "deploy", "category": "semantical"}, "category"),
        ({"q": "deploy", "knowledge_category": "finance"}, "knowledge_category"),
        ({"q": "deploy", "include_superseded": "maybe"}, "include_superseded"),
        ({"q": "deploy", "at_time": "last tuesday"}, "at_time"),
        ({"q": "deploy", "at_time": "2026-02-30T00:00:00Z"}, "at_time"),
        ({"q": "deploy", "client_id": "acme corp"}, "client_id"),
        ({"q": "deploy", "source_agent": "claude code"}, "source_agent"),
        ({"q": "deploy", "entity": ""}, "entity"),
    ],
)
def test_invalid_search_parameters_are_refused(shared_client: TestClient, params: dict[str, Any], field: str) -> None:
    assert_error(shared_client.get("/memory/search", params=params), 400, field)


@pytest.mark.parametrize(("limit", "expected"), [(1, 1), (2, 2), (100, len(CORPUS))])
def test_limit_bounds_the_results(
    shared_client: TestClient, corpus: list[dict[str, Any]], limit: int, expected: int
) -> None:
    body = search(shared_client, "what happened with Acme", limit=limit)

    assert body["count"] == expected


def test_default_limit_is_10(client: TestClient) -> None:
    for n in range(11):
        store(client, f"Release note {n}: shipped version 2.{n} of the Acme dashboard")

    assert search(client, "Acme dashboard release")["count"] == 10


def test_the_response_echoes_the_query(shared_client: TestClient, corpus: list[dict[str, Any]]) -> None:
    assert search(shared_client, "brand palette")["query"] == "brand palette"


def test_an_empty_store_returns_no_results_after_the_key_term_retry(client: TestClient) -> None:
    assert search(client, "anything about Acme", format="full") == {
        "query": "anything about Acme", "expanded_query": "Acme", "count": 0, "results": [], "retry": True,
        "retrieval": {"multi_path": True, "paths": {"vector": 0, "keyword": 0}},
    }


# -- formats -------------------------------------------------------------------------------------------


def test_compact_format_has_no_retrieval_block(shared_client: TestClient, corpus: list[dict[str, Any]]) -> None:
    body = search(shared_client, "billing database", format="compact")

    assert "retrieval" not in body
    hit = body["results"][0]
    assert {"id", "score", "effective_score", "type", "content", "source_agent", "client_id", "importance",
            "created_at"} <= set(hit)
    assert "retrieval_sources" not in hit and "metadata" not in hit and "text" not in hit


@pytest.mark.parametrize("form", [None, "xml", "default"])
def test_the_default_shape_is_the_whole_record_with_its_text_under_text(
    shared_client: TestClient, corpus: list[dict[str, Any]], form: str | None
) -> None:
    body = search(shared_client, "billing database", **({"format": form} if form else {}))

    assert "retrieval" not in body
    hit = body["results"][0]
    assert hit["text"] == hit["content"] and hit["content"] == get(shared_client, hit["id"])["content"]
    assert {"score", "effective_score", "confidence", "observed_by", "entities", "metadata"} <= set(hit)
    assert "retrieval_sources" not in hit


def test_compact_truncates_content_to_200_chars(client: TestClient) -> None:
    long_text = ("Post-mortem for the March outage at Acme: the primary database failed over, replicas lagged, "
                 "and the on-call engineer rolled back the schema migration. ") * 4
    created = store(client, long_text)

    hit = search(client, "Acme outage post-mortem", format="compact")["results"][0]

    assert hit["id"] == created["id"]
    assert len(hit["content"]) <= 200
    assert hit["content"] != long_text
    assert long_text.startswith(hit["content"].rstrip("…").rstrip())
    assert len(hit["content"]) >= 190


def test_compact_keeps_short_content_whole(client: TestClient) -> None:
    text = "x" * 150 + " Acme"
    store(client, text)

    assert search(client, "Acme", format="compact")["results"][0]["content"] == text


def test_full_format_returns_whole_records_and_retrieval_sources(client: TestClient) -> None:
    long_text = "Acme's security review found three medium issues in the login flow. " * 5
    created = store(client, long_text, metadata={"ticket": "SEC-142"})

    body = search(client, "security review login", format="full")

    assert body["retrieval"]["multi_path"] is True
    assert set(body["retrieval"]["paths"]) == {"vector", "keyword"}
    assert body["retrieval"]["paths"]["vector"] == 1 and body["retrieval"]["paths"]["keyword"] == 1
    hit = body["results"][0]
    assert hit["id"] == created["id"]
    assert hit["content"] == long_text
    assert hit["metadata"] == {"ticket": "SEC-142"}
    assert hit["observed_by"] == ["claude-code"]
    assert hit["retrieval_sources"] == ["keyword", "vector"]


def test_full_format_reports_a_vector_only_hit(client: TestClient) -> None:
    store(client, "Acme's security review found three medium issues in the login flow")

    hit = search(client, "zzyzx quokka", format="full")["results"][0]

    assert hit["retrieval_sources"] == ["vector"]


def test_index_format_returns_upstreams_index_items(client: TestClient) -> None:
    long_text = "Initech renewal call: they want a 12% discount for a three-year commitment. " * 4
    created = store(client, "\n" + long_text + "\nsecond line", type="decision", importance="high",
                    client_id="initech")

    body = search(client, "Initech renewal discount", format="index")

    assert "retrieval" not in body
    hit = body["results"][0]
    assert set(hit) == {"id", "effective_score", "type", "summary", "importance", "client_id", "created_at"}
    assert (hit["id"], hit["type"], hit["importance"], hit["client_id"]) == (created["id"], "decision", "high",
                                                                             "initech")
    assert len(hit["summary"]) <= 80  # the first non-empty line, cut
    assert long_text.startswith(hit["summary"].rstrip("…").rstrip())


def test_scores_have_4_decimals_and_results_are_ranked_by_effective_score(
    shared_client: TestClient, corpus: list[dict[str, Any]]
) -> None:
    hits = search(shared_client, "Acme deploy pipeline status", format="full", limit=100)["results"]

    for hit in hits:
        assert round(hit["score"], 4) == hit["score"]
        assert round(hit["effective_score"], 4) == hit["effective_score"]
        assert 0 < hit["effective_score"] <= 2.0
    scores = [hit["effective_score"] for hit in hits]
    assert scores == sorted(scores, reverse=True)


# -- filters -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("param", "value"),
    [("type", "fact"), ("type", "event"), ("type", "decision"), ("type", "status"),
     ("source_agent", "n8n"), ("source_agent", "claude-code"), ("client_id", "acme-corp"), ("client_id", "global"),
     ("category", "semantic"), ("category", "procedural"), ("category", "episodic"),
     ("knowledge_category", "technical"), ("knowledge_category", "meeting")],
)
def test_each_filter_returns_exactly_the_matching_memories(
    shared_client: TestClient, corpus: list[dict[str, Any]], param: str, value: str
) -> None:
    defaults = {"source_agent": "claude-code", "client_id": "global", "category": "episodic"}
    expected = {entry["id"] for entry in corpus if entry.get(param, defaults.get(param)) == value}

    found = search_ids(shared_client, "Acme brand contact deploy decision", **{param: value})

    assert expected
    assert set(found) == expected


def test_filters_combine(shared_client: TestClient, corpus: list[dict[str, Any]]) -> None:
    found = search_ids(shared_client, "Acme", client_id="acme-corp", type="event", source_agent="n8n")

    assert found == [corpus[1]["id"]]


def test_a_filter_value_nobody_has_returns_nothing(shared_client: TestClient, corpus: list[dict[str, Any]]) -> None:
    assert search_ids(shared_client, "Acme", client_id="umbrella-corp") == []
    assert search_ids(shared_client, "Acme", source_agent="nobody") == []


def test_entity_matches_the_extracted_entity_by_any_spelling(client: TestClient) -> None:
    pg = store(client, "The billing service stores invoices in PostgreSQL 16")
    nxt = store(client, "The marketing site runs on Next.js 14 with the App Router")
    aurora = store(client, "Postgres-compatible Aurora was rejected for cost reasons", type="decision")

    for spelling in ("PostgreSQL", "postgresql", "POSTGRESQL", "postgres"):  # "Postgres-compatible": the alias
        assert set(search_ids(client, "database", entity=spelling)) == {pg["id"], aurora["id"]}, spelling
    for spelling in ("Next.js", "nextjs", "NEXT.JS"):
        assert search_ids(client, "framework", entity=spelling) == [nxt["id"]], spelling
    assert search_ids(client, "framework", entity="App Router") == []  # words of the text, not an entity
    assert search_ids(client, "framework", entity="Next.js 15") == []


def test_entity_does_not_match_other_words_that_share_a_stem(client: TestClient) -> None:
    go = store(client, "The ingestion workers are written in Go for the low memory footprint")
    store(client, "The team is going offsite to Lisbon in May", type="decision")
    store(client, "Postgres-compatible Aurora was rejected for cost reasons", type="decision")

    assert search_ids(client, "programming language", entity="Go") == [go["id"]]
    assert search_ids(client, "database", entity="Postgre") == []


def test_entity_search_is_vector_only(client: TestClient) -> None:
    created = store(client, "Acme's billing service stores invoices in PostgreSQL 16")

    body = search(client, "invoices", entity="PostgreSQL", format="full")

    assert body["retrieval"]["multi_path"] is False
    assert body["retrieval"]["paths"] == {"vector": 1}
    assert body["results"][0]["id"] == created["id"]
    assert body["results"][0]["retrieval_sources"] == ["vector"]


def test_entity_combines_with_other_filters(client: TestClient) -> None:
    acme = store(client, "Acme uses Stripe for subscription billing", client_id="acme-corp")
    store(client, "Globex uses Stripe for marketplace payouts", client_id="globex")

    assert search_ids(client, "payments", entity="stripe", client_id="acme-corp") == [acme["id"]]


# -- tenants -------------------------------------------------------------------------------------------


def test_client_id_filter_never_returns_another_tenants_memory(client: TestClient) -> None:
    text = "Quarterly business review in Slack: renewal is at risk because of support response times"
    ids = {tenant: store(client, text, client_id=tenant)["id"] for tenant in ("acme-corp", "globex")}
    ids["global"] = store(client, text)["id"]
    old = store(client, "Escalation owner is Dana", type="fact", client_id="globex", key="escalation-owner")
    store(client, "Escalation owner is Hank", type="fact", client_id="globex", key="escalation-owner")

    for extra in ({}, {"format": "full"}, {"format": "index"}, {"include_superseded": "true"},
                  {"at_time": "2030-01-01T00:00:00Z"}, {"entity": "slack"}):
        assert search_ids(client, "renewal at risk support", client_id="acme-corp", **extra) == [ids["acme-corp"]]
        assert old["id"] not in search_ids(client, "escalation owner", client_id="acme-corp", **extra)
    globex = search(client, "renewal at risk", client_id="globex", format="full", include_superseded="true")
    assert {hit["client_id"] for hit in globex["results"]} == {"globex"}


def test_without_client_filter_search_spans_tenants(client: TestClient) -> None:
    text = "Quarterly business review: renewal is at risk"
    ids = {store(client, text, client_id=tenant)["id"] for tenant in ("acme-corp", "globex", "global")}

    assert set(search_ids(client, "renewal at risk")) == ids


# -- superseded, at_time, deleted ----------------------------------------------------------------------


@pytest.fixture
def hosting_history(client: TestClient, clock: TickingClock) -> dict[str, Any]:
    """A fact superseded 10 days after it was stored: Heroku (old) then AWS (current)."""
    old = store(client, "Acme hosts its app on Heroku dynos", type="fact", client_id="acme-corp", key="acme-hosting")
    old_created = get(client, old["id"])["created_at"]
    clock.advance(days=10)
    new = store(client, "Acme hosts its app on AWS ECS Fargate", type="fact", client_id="acme-corp",
                key="acme-hosting")
    return {"old": old["id"], "new": new["id"], "old_created": old_created,
            "switched": get(client, old["id"])["superseded_at"]}


def test_search_excludes_superseded_by_default(client: TestClient, hosting_history: dict[str, Any]) -> None:
    assert search_ids(client, "where does Acme host its app") == [hosting_history["new"]]


@pytest.mark.parametrize("flag", ["true", "True", "1"])
def test_include_superseded_returns_both_versions(
    client: TestClient, hosting_history: dict[str, Any], flag: str
) -> None:
    body = search(client, "where does Acme host its app", include_superseded=flag, limit=100, format="compact")

    by_id = {hit["id"]: hit for hit in body["results"]}
    assert set(by_id) == {hosting_history["old"], hosting_history["new"]}
    assert by_id[hosting_history["old"]]["active"] is False
    assert by_id[hosting_history["old"]]["superseded_by"] == hosting_history["new"]
    assert "active" not in by_id[hosting_history["new"]]


def test_include_superseded_false_behaves_like_the_default(client: TestClient, hosting_history: dict[str, Any]) -> None:
    assert search_ids(client, "Acme hosting", include_superseded="false") == [hosting_history["new"]]


def test_at_time_returns_what_was_true_then(client: TestClient, hosting_history: dict[str, Any]) -> None:
    q = "where does Acme host its app"
    before_both = "2026-02-01T00:00:00Z"
    during_old = "2026-03-05T00:00:00Z"
    after_switch = "2026-03-20T00:00:00Z"

    assert search_ids(client, q, at_time=before_both) == []
    assert search_ids(client, q, at_time=during_old) == [hosting_history["old"]]
    assert search_ids(client, q, at_time=after_switch) == [hosting_history["new"]]


def test_at_time_boundaries_are_start_inclusive_end_exclusive(
    client: TestClient, hosting_history: dict[str, Any]
) -> None:
    q = "where does Acme host its app"

    assert search_ids(client, q, at_time=hosting_history["old_created"]) == [hosting_history["old"]]
    assert search_ids(client, q, at_time=hosting_history["switched"]) == [hosting_history["new"]]


def test_at_time_uses_the_stated_validity_window(client: TestClient) -> None:
    promo = store(client, "Acme runs a 20% spring discount on annual plans", client_id="acme-corp",
                  valid_from="2025-03-01T00:00:00Z", valid_to="2025-06-01T00:00:00Z")
    policy = store(client, "Acme's refund window is 30 days", type="fact", client_id="acme-corp",
                   key="acme-refunds", valid_from="2025-01-01T00:00:00Z")
    q = "Acme discount and refund policy"

    assert search_ids(client, q, at_time="2024-12-31T23:59:59Z") == []
    assert search_ids(client, q, at_time="2025-01-01T00:00:00Z") == [policy["id"]]
    assert set(search_ids(client, q, at_time="2025-03-01T00:00:00Z")) == {promo["id"], policy["id"]}
    assert set(search_ids(client, q, at_time="2025-05-31T23:59:59.999Z")) == {promo["id"], policy["id"]}
    assert search_ids(client, q, at_time="2025-06-01T00:00:00Z") == [policy["id"]]
    assert search_ids(client, q, at_time="2025-06-01T02:00:00+02:00") == [policy["id"]]


def test_at_time_without_validity_starts_at_creation(client: TestClient) -> None:
    created = store(client, "Initech signed the data processing agreement")

    assert search_ids(client, "Initech agreement", at_time="2026-02-28T00:00:00Z") == []
    assert search_ids(client, "Initech agreement", at_time="2099-01-01T00:00:00Z") == [created["id"]]


def test_deleted_memories_never_appear(client: TestClient, hosting_history: dict[str, Any]) -> None:
    client.delete(f"/memory/{hosting_history['new']}")
    client.delete(f"/memory/{hosting_history['old']}")
    q = "where does Acme host its app"

    for extra in ({}, {"include_superseded": "true"}, {"at_time": "2026-03-05T00:00:00Z"},
                  {"at_time": "2026-03-20T00:00:00Z"}, {"entity": "AWS"}, {"format": "full"}):
        assert search_ids(client, q, **extra) == []


# -- ranking -------------------------------------------------------------------------------------------


def test_critical_outranks_low_for_identical_text(client: TestClient) -> None:
    text = "Production database credentials were rotated after the incident"
    low = store(client, text, client_id="globex", importance="low")
    critical = store(client, text, client_id="acme-corp", importance="critical")

    hits = search(client, "database credentials rotated", format="full")["results"]

    assert [hit["id"] for hit in hits] == [critical["id"], low["id"]]
    assert hits[0]["effective_score"] > hits[1]["effective_score"] * 1.5


@pytest.mark.parametrize(("importance", "weight"), [("critical", 1.0), ("high", 0.85), ("medium", 0.7), ("low", 0.5)])
def test_importance_weights(client: TestClient, importance: str, weight: float) -> None:
    store(client, "We chose Terraform over Pulumi for infrastructure as code", type="decision",
          importance=importance)

    hit = search(client, "infrastructure as code tool", format="full")["results"][0]

    assert hit["effective_score"] == pytest.approx(hit["score"] * weight, abs=2e-4)


RELEVANCE = [
    ("Which database holds Acme's invoices?", 0),
    ("who should I call at Globex", 2),
    ("what framework did we pick for the mobile app", 3),
    ("when is the Initech meeting", 4),
    ("is the deployment pipeline healthy", 5),
    ("what colours does Acme want for its brand", 1),
]


def test_the_relevant_memory_ranks_first(client: TestClient) -> None:
    corpus = store_corpus(client)

    # Each search returns all six memories (default limit 10), so reinforcement lifts them all alike.
    for q, expected in RELEVANCE:
        hits = search(client, q)["results"]
        assert len(hits) == len(CORPUS)
        assert hits[0]["id"] == corpus[expected]["id"], (q, [hit["content"] for hit in hits[:3]])


def test_facts_decay_by_0_98_per_day_since_last_access(client: TestClient, clock: TickingClock) -> None:
    store(client, "Acme's fiscal year ends in June", type="fact", key="acme-fiscal-year")
    clock.advance(days=30)

    hit = search(client, "Acme fiscal year", format="full")["results"][0]

    assert hit["effective_score"] == pytest.approx(hit["score"] * 0.7 * 0.98**30, abs=2e-4)


def test_statuses_decay_too(client: TestClient, clock: TickingClock) -> None:
    store(client, "Acme onboarding is blocked on SSO", type="status", subject="acme-onboarding")
    clock.advance(days=10)

    hit = search(client, "Acme onboarding", format="full")["results"][0]

    assert hit["effective_score"] == pytest.approx(hit["score"] * 0.7 * 0.98**10, abs=2e-4)


@pytest.mark.parametrize("type_", ["event", "decision"])
def test_events_and_decisions_do_not_decay(client: TestClient, clock: TickingClock, type_: str) -> None:
    store(client, "Acme chose Stripe for billing", type=type_)
    clock.advance(days=90)

    hit = search(client, "Acme billing provider", format="full")["results"][0]

    assert hit["effective_score"] == pytest.approx(hit["score"] * 0.7, abs=2e-4)


def test_an_access_resets_decay_and_boosts(client: TestClient, clock: TickingClock) -> None:
    store(client, "Acme's fiscal year ends in June", type="fact", key="acme-fiscal-year")
    clock.advance(days=30)
    search(client, "Acme fiscal year")

    hit = search(client, "Acme fiscal year", format="full")["results"][0]

    assert hit["effective_score"] == pytest.approx(hit["score"] * 0.7 * 1.05, abs=2e-4)


# 1 + 0.05·log2(n + 1), capped at 1.15 (ADR 0042; semantics.md's 0.3 / 2.0 are settings)
@pytest.mark.parametrize(("accesses", "boost"), [(1, 1.05), (3, 1.1), (15, 1.15)])  # 1 + 0.05·log2(16) = 1.2 → cap
def test_access_boost_grows_with_log2_and_caps(client: TestClient, accesses: int, boost: float) -> None:
    store(client, "Globex wants invoices in EUR", type="decision", importance="critical")
    for _ in range(accesses):
        search(client, "Globex invoice currency", format="index")

    hit = search(client, "Globex invoice currency", format="full")["results"][0]

    assert hit["access_count"] == accesses
    assert hit["effective_score"] == pytest.approx(hit["score"] * boost, abs=2e-4)


# -- reinforcement -------------------------------------------------------------------------------------


RESTAURANTS = ["Alice prefers vegetarian restaurants",
               "Alice's favourite restaurant is closed tonight for renovation",
               "The team dinner is booked for Friday at 7pm", "Bob is allergic to peanuts"]


@pytest.mark.parametrize("searches", [6, 50])
def test_a_popular_memory_does_not_outrank_the_relevant_one(client: TestClient, searches: int) -> None:
    """Issue 37: searching one topic again and again must not make its answer outrank the relevant memory for
    another question (the unrelated one scores 0.81 of the relevant one's relevance here)."""
    ids = {content: store(client, content, type="fact", key=f"k{n}")["id"] for n, content in enumerate(RESTAURANTS)}
    for _ in range(searches):
        search(client, "Is the restaurant closed tonight?", limit=1)
    assert get(client, ids[RESTAURANTS[1]])["access_count"] == searches

    hits = search(client, "What kind of food does Alice like?", format="full", read_only="true")["results"]

    assert hits[0]["id"] == ids[RESTAURANTS[0]], [(h["content"], h["score"], h["effective_score"]) for h in hits]


def test_a_read_only_search_changes_no_ranking(client: TestClient) -> None:
    store(client, RESTAURANTS[0], type="fact", key="alice-food")
    before = search(client, "Alice food", format="full")["results"][0]["access_count"]
    for params in ({"read_only": "true"}, {"track_access": "false"}):
        search(client, "Alice food", **params)
    assert search(client, "Alice food", format="full", read_only="true")["results"][0]["access_count"] == before + 1


def test_each_returned_hit_counts_as_one_access(client: TestClient) -> None:
    acme = store(client, "Acme prefers async updates over meetings", client_id="acme-corp")
    globex = store(client, "Globex prefers weekly calls over email", client_id="globex")

    for _ in range(3):
        search(client, "communication preferences", client_id="acme-corp")

    acme_record, globex_record = get(client, acme["id"]), get(client, globex["id"])
    assert acme_record["access_count"] == 3
    assert acme_record["last_accessed_at"] is not None
    assert globex_record["access_count"] == 0
    assert globex_record["last_accessed_at"] is None


def test_only_the_hits_within_the_limit_are_reinforced(client: TestClient) -> None:
    ids = [store(client, f"Incident {n}: checkout latency spiked in region {n}")["id"] for n in range(4)]

    returned = search_ids(client, "checkout latency incident")
    top = search(client, "checkout latency incident", limit=1)["results"][0]["id"]

    counts = {memory_id: get(client, memory_id)["access_count"] for memory_id in ids}
    assert set(returned) == set(ids)
    assert counts[top] == 2
    assert sorted(counts.values()) == [1, 1, 1, 2]


def test_a_search_with_no_hits_reinforces_nothing(client: TestClient) -> None:
    created = store(client, "Acme prefers async updates", client_id="acme-corp")

    search(client, "async updates", client_id="globex")

    assert get(client, created["id"])["access_count"] == 0


def test_reading_a_memory_by_id_is_not_an_access(client: TestClient) -> None:
    created = store(client, "Acme prefers async updates", client_id="acme-corp")

    get(client, created["id"])

    assert get(client, created["id"])["access_count"] == 0


def test_last_accessed_at_moves_forward(client: TestClient, clock: TickingClock) -> None:
    created = store(client, "Acme prefers async updates")
    search(client, "async updates")
    first = get(client, created["id"])["last_accessed_at"]
    clock.advance(days=2)

    search(client, "async updates")

    second = get(client, created["id"])["last_accessed_at"]
    assert second > first
    assert second.startswith("2026-03-03")


def test_parallel_searches_lose_no_access(client: TestClient) -> None:
    created = store(client, "Globex's renewal date is October 1st", client_id="globex")

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(lambda _: search(client, "Globex renewal date"), range(12)))

    assert get(client, created["id"])["access_count"] == 12
