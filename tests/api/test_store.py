"""POST /memory: the 201 shape, every validation limit at its boundary, dedup, corroboration, supersede."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.helpers import (
    TIMESTAMP,
    UUID,
    assert_error,
    expected_hash,
    get,
    memory,
    query,
    search_ids,
    store,
)

STACK = "Acme Corp uses Next.js 14 with App Router and deploys to Vercel"


def exactly(length: int, text: str = "Deploy log: api-gateway rolled out to eu-west-1 without errors. ") -> str:
    return (text * (length // len(text) + 1))[:length]


def nested(depth: int) -> dict[str, Any]:
    """A metadata object `depth` levels deep: nested(1) == {"level1": "leaf"}."""
    value: Any = "leaf"
    for level in range(depth, 0, -1):
        value = {f"level{level}": value}
    result: dict[str, Any] = value
    return result


# -- the happy path ------------------------------------------------------------------------------------


def test_store_returns_201_with_the_documented_shape(client: TestClient) -> None:
    response = client.post("/memory", json=memory(
        STACK, type="fact", client_id="acme-corp", key="acme-tech-stack", importance="high",
        knowledge_category="technical",
    ))

    assert response.status_code == 201, response.text
    body = response.json()
    assert UUID.match(body["id"])
    assert body["type"] == "fact"
    assert body["content_hash"] == expected_hash(STACK)
    assert body["deduplicated"] is False
    assert body["supersedes"] is None
    assert body["stored_in"] == {"vector": True, "structured_db": True}
    assert "warning" not in body


def test_the_stored_record_carries_every_field(client: TestClient) -> None:
    created = store(
        client, STACK, type="fact", client_id="acme-corp", key="acme-tech-stack", importance="high",
        category="semantic", knowledge_category="technical", metadata={"source": "kickoff call", "page": 3},
    )

    record = get(client, created["id"])

    assert record["id"] == created["id"]
    assert record["content"] == STACK
    assert record["content_hash"] == created["content_hash"]
    assert (record["type"], record["client_id"], record["key"]) == ("fact", "acme-corp", "acme-tech-stack")
    assert (record["importance"], record["category"], record["knowledge_category"]) == ("high", "semantic", "technical")
    assert record["metadata"] == {"source": "kickoff call", "page": 3}
    assert record["observed_by"] == ["claude-code"]
    assert record["observation_count"] == 1
    assert record["active"] is True
    assert record["access_count"] == 0
    assert record["supersedes"] is None and record["superseded_by"] is None
    assert record["deleted_at"] is None
    assert TIMESTAMP.match(record["created_at"])


def test_defaults_client_global_episodic_medium_general(client: TestClient) -> None:
    created = store(client, "Standup notes: the staging database was restored from last night's snapshot")

    record = get(client, created["id"])

    assert record["client_id"] == "global"
    assert record["category"] == "episodic"
    assert record["importance"] == "medium"
    assert record["knowledge_category"] == "general"  # upstream's default
    assert record["metadata"] == {}
    assert record["valid_from"] is None  # an event's validity is its creation


@pytest.mark.parametrize(
    ("fields", "warned"),
    [
        ({"type": "fact"}, "key"),
        ({"type": "status"}, "subject"),
        ({"type": "event"}, None),
        ({"type": "decision"}, None),
        ({"type": "fact", "key": "acme-hosting"}, None),
        ({"type": "status", "subject": "deploy-pipeline", "status_value": "green"}, None),
    ],
)
def test_a_fact_without_key_or_status_without_subject_carries_a_warning(
    shared_client: TestClient, fields: dict[str, Any], warned: str | None
) -> None:
    body = store(shared_client, f"Acme's production cluster runs on AWS us-east-1 ({fields})", **fields)

    if warned is None:
        assert "warning" not in body
    else:
        assert warned in body["warning"]


# -- validation limits ---------------------------------------------------------------------------------


def test_content_of_exactly_10000_chars_is_accepted(shared_client: TestClient) -> None:
    content = exactly(10_000)

    created = store(shared_client, content)

    assert len(get(shared_client, created["id"])["content"]) == 10_000


def test_content_of_10001_chars_is_refused(shared_client: TestClient) -> None:
    assert_error(shared_client.post("/memory", json=memory(exactly(10_001))), 400, "content")


@pytest.mark.parametrize("content", ["", " ", "   \n\t  "])
def test_blank_content_is_refused(shared_client: TestClient, content: str) -> None:
    assert_error(shared_client.post("/memory", json=memory(content)), 400, "content")


@pytest.mark.parametrize("field", ["type", "content", "source_agent"])
def test_each_required_field_is_named_when_missing(shared_client: TestClient, field: str) -> None:
    body = memory("Acme approved the Q3 marketing budget")
    del body[field]

    assert_error(shared_client.post("/memory", json=body), 400, field)


@pytest.mark.parametrize("agent", ["a", "n8n", "claude-code", "ops_bot-2", "A" * 64])
def test_valid_source_agents_are_accepted(shared_client: TestClient, agent: str) -> None:
    created = store(shared_client, f"Globex asked for a revised SOW (noted by {agent})", source_agent=agent)

    assert get(shared_client, created["id"])["source_agent"] == agent


@pytest.mark.parametrize("agent", ["", "A" * 65, "claude code", "agent/1", "agent.v2", "émile", "claude-code\n"])
def test_invalid_source_agents_are_refused(shared_client: TestClient, agent: str) -> None:
    assert_error(shared_client.post("/memory", json=memory("Globex asked for a revised SOW", source_agent=agent)),
                 400, "source_agent")


@pytest.mark.parametrize("client_id", ["acme corp", "-acme", "", "a" * 129, "acme/corp"])
def test_invalid_client_ids_are_refused(shared_client: TestClient, client_id: str) -> None:
    assert_error(shared_client.post("/memory", json=memory("Invoice sent", client_id=client_id)), 400, "client_id")


def test_metadata_of_exactly_10kb_is_accepted(shared_client: TestClient) -> None:
    metadata = {"transcript": "x" * (10 * 1024 - len('{"transcript":""}'))}

    created = store(shared_client, "Meeting transcript attached", metadata=metadata)

    assert get(shared_client, created["id"])["metadata"] == metadata


def test_metadata_one_byte_over_10kb_is_refused(shared_client: TestClient) -> None:
    metadata = {"transcript": "x" * (10 * 1024 - len('{"transcript":""}') + 1)}

    assert_error(shared_client.post("/memory", json=memory("Meeting transcript attached", metadata=metadata)),
                 400, "metadata")


def test_metadata_size_counts_utf8_bytes(shared_client: TestClient) -> None:
    metadata = {"notes": "é" * 5_200}  # 5,200 characters but 10,400 bytes

    response = shared_client.post("/memory", json=memory("Notes from the Paris office", metadata=metadata))

    assert_error(response, 400, "metadata")


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_metadata_up_to_3_levels_is_accepted(shared_client: TestClient, depth: int) -> None:
    created = store(shared_client, f"Nested metadata at depth {depth}", metadata=nested(depth))

    assert get(shared_client, created["id"])["metadata"] == nested(depth)


@pytest.mark.parametrize("metadata", [nested(4), {"tags": [["a", ["b"]]]}, {"a": {"b": [{"c": 1}]}}])
def test_metadata_4_levels_deep_is_refused(shared_client: TestClient, metadata: dict[str, Any]) -> None:
    assert_error(shared_client.post("/memory", json=memory("Too deep", metadata=metadata)), 400, "metadata")


@pytest.mark.parametrize("metadata", [["a", "b"], "notes", 42])
def test_metadata_must_be_an_object(shared_client: TestClient, metadata: Any) -> None:
    assert_error(shared_client.post("/memory", json=memory("Odd metadata", metadata=metadata)), 400, "metadata")


def test_key_of_128_chars_is_accepted_and_129_refused(shared_client: TestClient) -> None:
    store(shared_client, "Acme billing contact is Dana Whitfield", type="fact", key="k" * 128)

    assert_error(shared_client.post("/memory", json=memory("Acme billing contact is Dana", type="fact", key="k" * 129)),
                 400, "key")


def test_empty_key_is_refused(shared_client: TestClient) -> None:
    assert_error(shared_client.post("/memory", json=memory("Acme billing contact", type="fact", key="")), 400, "key")


@pytest.mark.parametrize("type_", ["event", "decision", "status"])
def test_key_on_a_non_fact_is_refused(shared_client: TestClient, type_: str) -> None:
    assert_error(shared_client.post("/memory", json=memory("Acme billing contact", type=type_, key="acme-billing")),
                 400, "key")


@pytest.mark.parametrize("field", ["subject", "status_value"])
def test_subject_and_status_value_of_256_are_accepted_and_257_refused(shared_client: TestClient, field: str) -> None:
    ok = {"subject": "deploy-pipeline", field: "s" * 256}
    too_long = {"subject": "deploy-pipeline", field: "s" * 257}

    store(shared_client, f"Deploy pipeline status update ({field})", type="status", **ok)

    assert_error(shared_client.post("/memory", json=memory("Deploy pipeline status again", type="status", **too_long)),
                 400, field)


@pytest.mark.parametrize("type_", ["event", "fact", "decision"])
def test_subject_on_a_non_status_is_refused(shared_client: TestClient, type_: str) -> None:
    assert_error(shared_client.post("/memory", json=memory("Pipeline is green", type=type_, subject="deploy-pipeline")),
                 400, "subject")


@pytest.mark.parametrize(
    ("field", "value"),
    [("type", "note"), ("type", "FACT"), ("category", "semantical"), ("importance", "urgent"),
     ("knowledge_category", "finance"), ("type", None), ("importance", 3)],
)
def test_bad_enum_values_are_refused(shared_client: TestClient, field: str, value: Any) -> None:
    body = memory("Acme picked Stripe for payments", **{field: value})

    assert_error(shared_client.post("/memory", json=body), 400, field)


@pytest.mark.parametrize("field", ["valid_from", "valid_to"])
@pytest.mark.parametrize("value", ["yesterday", "2026-13-01T00:00:00Z", "2026-02-30T10:00:00Z", "2026-03-01T25:00:00Z",
                                   "01/03/2026", ""])
def test_bad_timestamps_are_refused(shared_client: TestClient, field: str, value: str) -> None:
    assert_error(shared_client.post("/memory", json=memory("Acme contract window", **{field: value})), 400, field)


@pytest.mark.parametrize("valid_to", ["2026-01-01T00:00:00Z", "2025-12-31T23:59:59Z", "2026-01-01T01:00:00+01:00"])
def test_valid_to_not_after_valid_from_is_refused(shared_client: TestClient, valid_to: str) -> None:
    body = memory("Acme contract window", valid_from="2026-01-01T00:00:00Z", valid_to=valid_to)

    assert_error(shared_client.post("/memory", json=body), 400, "valid_to")


def test_validity_window_is_stored_in_utc(shared_client: TestClient) -> None:
    created = store(shared_client, "Acme ran a pricing experiment", valid_from="2026-01-01T12:00:00+02:00",
                    valid_to="2026-01-01T10:00:00.001Z")

    record = get(shared_client, created["id"])

    assert record["valid_from"] == "2026-01-01T10:00:00.000Z"
    assert record["valid_to"] == "2026-01-01T10:00:00.001Z"


def test_malformed_json_is_refused(shared_client: TestClient) -> None:
    response = shared_client.post("/memory", content=b'{"type": "event", "content": ',
                                  headers={"content-type": "application/json"})

    assert_error(response, 400, "body")


def test_a_missing_body_is_refused(shared_client: TestClient) -> None:
    assert_error(shared_client.post("/memory"), 400, "body")


@pytest.mark.parametrize("raw", [b'[{"type": "event"}]', b'"just a string"', b"42", b"null", b"true"])
def test_a_body_that_is_not_an_object_is_refused_naming_the_body(shared_client: TestClient, raw: bytes) -> None:
    response = shared_client.post("/memory", content=raw, headers={"content-type": "application/json"})

    assert_error(response, 400, "body")


def test_unknown_fields_are_ignored(shared_client: TestClient) -> None:
    created = store(shared_client, "Acme's CFO approved the vendor", mood="cheerful")

    assert "mood" not in get(shared_client, created["id"])


# -- dedup and corroboration ---------------------------------------------------------------------------


def test_same_content_same_agent_is_deduplicated(client: TestClient) -> None:
    first = store(client, STACK, type="fact", client_id="acme-corp", key="acme-tech-stack")

    response = client.post("/memory", json=memory(STACK, type="fact", client_id="acme-corp", key="acme-tech-stack"))

    assert response.status_code == 200
    body = response.json()
    assert body["deduplicated"] is True
    assert body["id"] == first["id"]
    assert body["content_hash"] == first["content_hash"]
    assert body["observed_by"] == ["claude-code"]
    assert body["observation_count"] == 1
    assert "duplicate" in body["message"].lower()
    assert query(client, type="facts", client_id="acme-corp", include_superseded="true")["count"] == 1


def test_dedup_ignores_the_key_and_metadata_of_the_repeat(client: TestClient) -> None:
    first = store(client, "Globex prefers Slack over email for approvals", metadata={"v": 1})

    again = store(client, "Globex prefers Slack over email for approvals", metadata={"v": 2}, importance="critical",
                  expect=200)

    assert again["id"] == first["id"]
    record = get(client, first["id"])
    assert record["metadata"] == {"v": 1}
    assert record["importance"] == "medium"


def test_dedup_is_scoped_to_the_client(client: TestClient) -> None:
    acme = store(client, "Kickoff meeting scheduled for Monday 10am", client_id="acme-corp")

    globex = store(client, "Kickoff meeting scheduled for Monday 10am", client_id="globex")
    default = store(client, "Kickoff meeting scheduled for Monday 10am")

    assert len({acme["id"], globex["id"], default["id"]}) == 3
    assert globex["deduplicated"] is False and default["deduplicated"] is False


def test_dedup_is_scoped_to_the_type(client: TestClient) -> None:
    event = store(client, "Move the launch to April", type="event")

    decision = store(client, "Move the launch to April", type="decision")

    assert decision["id"] != event["id"]


def test_dedup_is_exact_on_content(client: TestClient) -> None:
    first = store(client, "Acme uses Postgres 16")

    assert store(client, "Acme uses Postgres 16.")["id"] != first["id"]
    assert store(client, "acme uses postgres 16")["id"] != first["id"]


def test_a_deleted_memory_does_not_dedup_a_new_one(client: TestClient) -> None:
    first = store(client, "Initech's VPN certificate expires in June")
    client.delete(f"/memory/{first['id']}")

    second = store(client, "Initech's VPN certificate expires in June")

    assert second["id"] != first["id"]
    assert get(client, second["id"])["active"] is True


def test_another_agent_corroborates(client: TestClient) -> None:
    first = store(client, STACK, client_id="acme-corp", source_agent="claude-code")

    response = client.post("/memory", json=memory(STACK, client_id="acme-corp", source_agent="n8n"))

    assert response.status_code == 200
    body = response.json()
    assert body["corroborated"] is True
    assert body["id"] == first["id"]
    assert body["observed_by"] == ["claude-code", "n8n"]
    assert body["observation_count"] == 2
    assert body["observed_by_count"] == 2 and body["deduplicated"] is True  # upstream's fields
    assert body["message"] == "Duplicate content from a different agent — recorded as corroboration"
    assert body["stored_in"] == {"vector": True, "structured_db": True}
    record = get(client, first["id"])
    assert record["observed_by"] == ["claude-code", "n8n"]
    assert record["observation_count"] == 2
    assert record["last_observed_at"] > record["created_at"]
    assert record["source_agent"] == "claude-code"


def test_corroboration_keeps_growing_and_repeats_are_deduplicated(client: TestClient) -> None:
    first = store(client, "Acme's fiscal year ends in June", source_agent="claude-code")
    store(client, "Acme's fiscal year ends in June", source_agent="n8n", expect=200)
    third = store(client, "Acme's fiscal year ends in June", source_agent="cursor", expect=200)

    repeat = store(client, "Acme's fiscal year ends in June", source_agent="n8n", expect=200)

    assert third["observed_by"] == ["claude-code", "n8n", "cursor"]
    assert third["observation_count"] == 3
    assert repeat["deduplicated"] is True
    assert get(client, first["id"])["observation_count"] == 3


def test_observed_by_is_capped_at_20_while_the_count_keeps_counting(client: TestClient) -> None:
    agents = [f"agent-{n:02d}" for n in range(25)]
    first = store(client, "Globex's office moves to Austin in May", source_agent=agents[0])
    for agent in agents[1:]:
        store(client, "Globex's office moves to Austin in May", source_agent=agent, expect=200)

    record = get(client, first["id"])

    assert record["observed_by"] == agents[:20]
    assert record["observation_count"] == 25


def test_parallel_identical_writes_leave_one_memory(client: TestClient) -> None:
    body = memory("Acme's SSO migration to Okta finished", client_id="acme-corp")

    with ThreadPoolExecutor(max_workers=8) as pool:
        responses = list(pool.map(lambda _: client.post("/memory", json=body), range(8)))

    assert sorted(r.status_code for r in responses) == [200] * 7 + [201]
    assert len({r.json()["id"] for r in responses}) == 1
    assert query(client, type="events", client_id="acme-corp")["count"] == 1


def test_parallel_corroborations_lose_no_observation(client: TestClient) -> None:
    first = store(client, "Acme's SSO migration to Okta finished", client_id="acme-corp")
    agents = [f"watcher-{n}" for n in range(8)]

    with ThreadPoolExecutor(max_workers=8) as pool:
        responses = list(pool.map(
            lambda agent: client.post("/memory", json=memory(
                "Acme's SSO migration to Okta finished", client_id="acme-corp", source_agent=agent)),
            agents,
        ))

    assert all(r.status_code == 200 for r in responses)
    record = get(client, first["id"])
    assert record["observation_count"] == 9
    assert sorted(record["observed_by"]) == sorted(["claude-code", *agents])


# -- supersede -----------------------------------------------------------------------------------------


def test_a_fact_with_the_same_key_supersedes_the_old_one(client: TestClient) -> None:
    old = store(client, "Acme hosts on Heroku", type="fact", client_id="acme-corp", key="acme-hosting")

    new = store(client, "Acme hosts on AWS ECS since the migration", type="fact", client_id="acme-corp",
                key="acme-hosting")

    assert new["supersedes"] == old["id"]
    old_record, new_record = get(client, old["id"]), get(client, new["id"])
    assert old_record["active"] is False
    assert old_record["superseded_by"] == new["id"]
    assert TIMESTAMP.match(old_record["superseded_at"])
    assert old_record["valid_to"] == old_record["superseded_at"]
    assert old_record["superseded_at"] >= new_record["created_at"]
    assert old_record["deleted_at"] is None
    assert new_record["active"] is True
    assert new_record["supersedes"] == old["id"]
    assert new_record["superseded_by"] is None


def test_supersede_chains(client: TestClient) -> None:
    v1 = store(client, "Acme's CTO is Priya", type="fact", client_id="acme-corp", key="acme-cto")
    v2 = store(client, "Acme's CTO is Marcus", type="fact", client_id="acme-corp", key="acme-cto")
    v3 = store(client, "Acme's CTO is Jordan", type="fact", client_id="acme-corp", key="acme-cto")

    assert (v2["supersedes"], v3["supersedes"]) == (v1["id"], v2["id"])
    assert get(client, v1["id"])["superseded_by"] == v2["id"]
    assert get(client, v2["id"])["superseded_by"] == v3["id"]
    facts = query(client, type="facts", key="acme-cto")["results"]
    assert [fact["id"] for fact in facts] == [v3["id"]]


def test_a_status_with_the_same_subject_supersedes_the_old_one(client: TestClient) -> None:
    old = store(client, "Deploy pipeline is red: integration tests failing", type="status",
                subject="deploy-pipeline", status_value="red")

    new = store(client, "Deploy pipeline is green again", type="status", subject="deploy-pipeline",
                status_value="green")

    assert new["supersedes"] == old["id"]
    assert get(client, old["id"])["active"] is False
    assert get(client, old["id"])["superseded_by"] == new["id"]


def test_the_same_key_in_another_client_does_not_supersede(client: TestClient) -> None:
    acme = store(client, "Primary contact is Dana", type="fact", client_id="acme-corp", key="primary-contact")

    globex = store(client, "Primary contact is Hank", type="fact", client_id="globex", key="primary-contact")
    default = store(client, "Primary contact is Lee", type="fact", key="primary-contact")

    assert globex["supersedes"] is None and default["supersedes"] is None
    for created in (acme, globex, default):
        record = get(client, created["id"])
        assert record["active"] is True and record["superseded_by"] is None


def test_the_same_subject_in_another_client_does_not_supersede(client: TestClient) -> None:
    acme = store(client, "Acme onboarding is blocked", type="status", client_id="acme-corp", subject="onboarding")

    globex = store(client, "Globex onboarding is done", type="status", client_id="globex", subject="onboarding")

    assert globex["supersedes"] is None
    assert get(client, acme["id"])["active"] is True


def test_a_different_key_does_not_supersede(client: TestClient) -> None:
    hosting = store(client, "Acme hosts on AWS", type="fact", client_id="acme-corp", key="acme-hosting")

    cdn = store(client, "Acme uses Cloudflare as CDN", type="fact", client_id="acme-corp", key="acme-cdn")

    assert cdn["supersedes"] is None
    assert get(client, hosting["id"])["active"] is True


def test_a_fact_without_key_never_supersedes(client: TestClient) -> None:
    first = store(client, "Acme hosts on AWS", type="fact", client_id="acme-corp")

    second = store(client, "Acme hosts on GCP now", type="fact", client_id="acme-corp")

    assert second["supersedes"] is None
    assert get(client, first["id"])["active"] is True


def test_repeating_the_current_fact_deduplicates_instead_of_superseding(client: TestClient) -> None:
    current = store(client, "Acme hosts on AWS", type="fact", client_id="acme-corp", key="acme-hosting")

    again = store(client, "Acme hosts on AWS", type="fact", client_id="acme-corp", key="acme-hosting", expect=200)

    assert again["id"] == current["id"] and again["deduplicated"] is True
    assert get(client, current["id"])["active"] is True


def test_a_superseded_fact_disappears_from_search(client: TestClient) -> None:
    old = store(client, "Acme hosts on Heroku dynos", type="fact", client_id="acme-corp", key="acme-hosting")
    new = store(client, "Acme hosts on AWS ECS Fargate", type="fact", client_id="acme-corp", key="acme-hosting")

    found = search_ids(client, "where does Acme host its app", client_id="acme-corp")

    assert found == [new["id"]]
    assert old["id"] not in found
