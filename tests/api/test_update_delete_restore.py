"""PATCH /memory/{id}, DELETE /memory/{id} and POST /memory/{id}/restore."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.helpers import TIMESTAMP, assert_error, expected_hash, get, query, search, search_ids, store

MISSING_ID = "9d1f5c7e-3a2b-4c6d-8e9f-0a1b2c3d4e5f"


def patch(client: TestClient, memory_id: str, body: Any) -> dict[str, Any]:
    response = client.patch(f"/memory/{memory_id}", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


# -- PATCH ---------------------------------------------------------------------------------------------


def test_patch_importance(client: TestClient) -> None:
    created = store(client, "Acme's SOC 2 audit starts in May", client_id="acme-corp")
    before = get(client, created["id"])

    body = patch(client, created["id"], {"importance": "critical"})

    assert body["id"] == created["id"]
    assert body["updated"] is True
    assert body["updated_fields"] == ["importance"]
    assert TIMESTAMP.match(body["updated_at"])
    after = get(client, created["id"])
    assert after["importance"] == "critical"
    assert after["updated_at"] == body["updated_at"] > before["updated_at"]
    assert after["content"] == before["content"]
    assert after["content_hash"] == before["content_hash"]
    assert after["created_at"] == before["created_at"]


def test_patch_importance_changes_the_effective_score(client: TestClient) -> None:
    created = store(client, "We chose Terraform over Pulumi", type="decision", importance="low")

    patch(client, created["id"], {"importance": "critical"})

    hit = search(client, "infrastructure as code tool", format="full")["results"][0]
    assert hit["importance"] == "critical"
    assert hit["effective_score"] == pytest.approx(hit["score"] * 1.0 * 1.0, abs=2e-4)


def test_patch_knowledge_category_updates_the_search_filter(client: TestClient) -> None:
    created = store(client, "Acme's CI runs on GitHub Actions", knowledge_category="general")

    patch(client, created["id"], {"knowledge_category": "technical"})

    assert search_ids(client, "continuous integration", knowledge_category="technical") == [created["id"]]
    assert search_ids(client, "continuous integration", knowledge_category="general") == []


def test_patch_metadata_replaces_and_scrubs(client: TestClient) -> None:
    created = store(client, "Acme staging environment notes", metadata={"owner": "dana", "env": "staging"})

    patch(client, created["id"], {"metadata": {"runbook": {"db_password": "password=Tr0ub4dor&3x"}}})

    metadata = get(client, created["id"])["metadata"]
    assert set(metadata) == {"runbook"}
    assert "Tr0ub4dor" not in str(metadata)
    assert metadata["runbook"]["db_password"].startswith("[REDACTED:password:")


def test_patch_several_fields_reports_them_in_order(client: TestClient) -> None:
    created = store(client, "Acme kickoff scheduled")

    body = patch(client, created["id"], {"metadata": {"room": "4B"}, "content": "Acme kickoff moved to Friday",
                                         "importance": "high", "knowledge_category": "meeting"})

    assert body["updated_fields"] == ["content", "importance", "knowledge_category", "metadata"]


def test_patch_content_rescrubs_and_rehashes(client: TestClient) -> None:
    created = store(client, "Acme's Stripe account is managed by the finance team")
    secret = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"

    patch(client, created["id"], {"content": f"Acme's Stripe live key is {secret}, rotate it quarterly"})

    record = get(client, created["id"])
    assert secret not in record["content"]
    assert re.fullmatch(r"Acme's Stripe live key is \[REDACTED:stripe-key:[0-9a-f]{12}\], rotate it quarterly",
                        record["content"])
    assert record["content_hash"] == expected_hash(record["content"])
    assert record["content_hash"] != created["content_hash"]


def test_patch_content_reindexes_the_keyword_path(client: TestClient) -> None:
    created = store(client, "The office dog Zephyr greets visitors at the Acme lobby, say the Slack photos")
    store(client, "Acme ordered new ergonomic chairs for the design team")
    assert search_ids(client, "anything", entity="Slack") == [created["id"]]

    patch(client, created["id"], {"content": "Acme runs its Kubernetes cluster on EKS with Karpenter autoscaling"})

    # Entities are extracted again from the new content: Slack is gone, Kubernetes and EKS arrive.
    assert search_ids(client, "anything", entity="k8s") == [created["id"]]
    assert search_ids(client, "anything", entity="Amazon EKS") == [created["id"]]
    assert search_ids(client, "anything", entity="Slack") == []
    new_word = search(client, "Karpenter", format="full")["results"]
    assert new_word[0]["id"] == created["id"]
    assert "keyword" in new_word[0]["retrieval_sources"]
    old_word = search(client, "Zephyr", format="full")["results"]
    assert all("keyword" not in hit["retrieval_sources"] for hit in old_word)


def test_patch_content_reembeds(client: TestClient) -> None:
    created = store(client, "The office dog at Acme is a golden retriever named Biscuit, as Slack knows")
    store(client, "Acme ordered new ergonomic chairs for the design team, as Slack knows")

    patch(client, created["id"], {"content": "Acme migrated its container workloads to a managed Kubernetes "
                                             "service, as Slack knows"})

    # With an entity filter only the vector path runs, so this ranks on the new embedding alone.
    hits = search(client, "container orchestration platform", entity="Slack", format="full")["results"]
    assert hits[0]["id"] == created["id"]
    assert hits[0]["content"].startswith("Acme migrated")


def test_patch_content_moves_the_dedup_hash(client: TestClient) -> None:
    created = store(client, "Globex renewal pending")
    patch(client, created["id"], {"content": "Globex renewal signed"})

    again_new = store(client, "Globex renewal signed", expect=200)
    again_old = store(client, "Globex renewal pending", expect=201)

    assert again_new["id"] == created["id"] and again_new["deduplicated"] is True
    assert again_old["id"] != created["id"]


def test_patch_content_to_an_active_duplicate_is_409(client: TestClient) -> None:
    other = store(client, "Globex renewal signed", client_id="globex")
    created = store(client, "Globex renewal pending", client_id="globex")

    message = assert_error(client.patch(f"/memory/{created['id']}", json={"content": "Globex renewal signed"}), 409)

    assert other["id"] in message
    assert get(client, created["id"])["content"] == "Globex renewal pending"


def test_patch_content_duplicating_another_memory_with_the_same_secret_is_409(client: TestClient) -> None:
    store(client, "The staging password: hunter2hunter is shared in 1Password")
    created = store(client, "The staging password lives in the vault")

    response = client.patch(f"/memory/{created['id']}",
                            json={"content": "The staging password: hunter2hunter is shared in 1Password"})

    assert_error(response, 409)


def test_patch_content_differing_from_another_memory_only_in_the_secret_is_fine(client: TestClient) -> None:
    store(client, "The staging password: [REDACTED] is shared in 1Password")
    store(client, "The staging password: hunter2hunter is shared in 1Password")
    created = store(client, "The staging password lives in the vault")

    response = client.patch(f"/memory/{created['id']}",
                            json={"content": "The staging password: other-Secret-7 is shared in 1Password"})

    assert response.status_code == 200, response.text
    assert "other-Secret-7" not in get(client, created["id"])["content"]


def test_patch_content_matching_another_tenant_is_fine(client: TestClient) -> None:
    store(client, "Renewal signed", client_id="acme-corp")
    created = store(client, "Renewal pending", client_id="globex")

    patch(client, created["id"], {"content": "Renewal signed"})

    assert get(client, created["id"])["content"] == "Renewal signed"


def test_patch_content_to_the_same_text_is_fine(client: TestClient) -> None:
    created = store(client, "Renewal signed")

    assert patch(client, created["id"], {"content": "Renewal signed"})["updated"] is True


def test_patch_unknown_id_is_404(shared_client: TestClient) -> None:
    assert_error(shared_client.patch(f"/memory/{MISSING_ID}", json={"importance": "high"}), 404)


def test_patch_deleted_memory_is_409(client: TestClient) -> None:
    created = store(client, "Acme's trial ends Friday")
    client.delete(f"/memory/{created['id']}")

    assert_error(client.patch(f"/memory/{created['id']}", json={"importance": "high"}), 409)
    assert get(client, created["id"])["importance"] == "medium"


@pytest.mark.parametrize("body", [{}, {"colour": "blue"}, {"type": "fact"}, {"importance": None}])
def test_patch_without_a_known_field_is_400(
    shared_client: TestClient, shared_memory_id: str, body: dict[str, Any]
) -> None:
    message = assert_error(shared_client.patch(f"/memory/{shared_memory_id}", json=body), 400, "body")

    assert "content" in message and "importance" in message


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"content": ""}, "content"),
        ({"content": "   "}, "content"),
        ({"content": "y" * 10_001}, "content"),
        ({"importance": "urgent"}, "importance"),
        ({"knowledge_category": "finance"}, "knowledge_category"),
        ({"metadata": {"a": {"b": {"c": {"d": 1}}}}}, "metadata"),
        ({"metadata": {"blob": "z" * (10 * 1024)}}, "metadata"),
        ({"metadata": ["not", "an", "object"]}, "metadata"),
    ],
)
def test_patch_validates_fields(
    shared_client: TestClient, shared_memory_id: str, body: dict[str, Any], field: str
) -> None:
    assert_error(shared_client.patch(f"/memory/{shared_memory_id}", json=body), 400, field)
    assert get(shared_client, shared_memory_id)["revision"] == 1


def test_patch_accepts_content_of_exactly_10000_chars(client: TestClient) -> None:
    created = store(client, "Acme's trial ends Friday")

    patch(client, created["id"], {"content": "y" * 10_000})

    assert len(get(client, created["id"])["content"]) == 10_000


def test_patch_malformed_json_is_400(shared_client: TestClient, shared_memory_id: str) -> None:
    response = shared_client.patch(f"/memory/{shared_memory_id}", content=b"{importance: high}",
                            headers={"content-type": "application/json"})

    assert_error(response, 400, "body")


def test_patch_body_that_is_not_an_object_is_400(shared_client: TestClient, shared_memory_id: str) -> None:
    response = shared_client.patch(f"/memory/{shared_memory_id}", json=["importance", "high"])

    assert_error(response, 400, "body")


# -- DELETE --------------------------------------------------------------------------------------------


def test_delete_without_body(client: TestClient) -> None:
    created = store(client, "Acme's staging URL is staging.acme.test")

    response = client.delete(f"/memory/{created['id']}")

    assert response.status_code == 200
    body = response.json()
    assert body["id"] == created["id"]
    assert body["deleted"] is True
    assert body["deleted_by"] == "claude-code"
    assert TIMESTAMP.match(body["deleted_at"])
    record = get(client, created["id"])
    assert record["active"] is False
    assert record["deleted_at"] == body["deleted_at"]
    assert record["deleted_by"] == "claude-code"
    assert record["delete_reason"] is None


def test_delete_with_reason_and_agent(client: TestClient) -> None:
    created = store(client, "Acme's CEO is Wile E. Coyote")

    response = client.request("DELETE", f"/memory/{created['id']}",
                              json={"reason": "Incorrect information", "source_agent": "n8n"})

    assert response.status_code == 200
    assert response.json()["deleted_by"] == "n8n"
    assert response.json()["reason"] == "Incorrect information"
    record = get(client, created["id"])
    assert (record["deleted_by"], record["delete_reason"]) == ("n8n", "Incorrect information")


def test_delete_with_an_empty_object_uses_the_defaults(client: TestClient) -> None:
    created = store(client, "Acme's CEO is Wile E. Coyote")

    response = client.request("DELETE", f"/memory/{created['id']}", json={})

    assert response.status_code == 200
    assert response.json()["deleted_by"] == "claude-code"


def test_delete_is_idempotent(client: TestClient) -> None:
    created = store(client, "Acme's CEO is Wile E. Coyote")
    first = client.request("DELETE", f"/memory/{created['id']}", json={"reason": "wrong", "source_agent": "n8n"})

    second = client.request("DELETE", f"/memory/{created['id']}", json={"reason": "again", "source_agent": "cursor"})

    assert second.status_code == 200
    assert second.json()["deleted_at"] == first.json()["deleted_at"]
    assert second.json()["deleted_by"] == "n8n"
    assert get(client, created["id"])["delete_reason"] == "wrong"


def test_delete_unknown_id_is_404(shared_client: TestClient) -> None:
    assert_error(shared_client.delete(f"/memory/{MISSING_ID}"), 404)


@pytest.mark.parametrize(
    ("body", "field"),
    [({"source_agent": "bad agent"}, "source_agent"), ({"reason": "r" * 1_001}, "reason")],
)
def test_delete_validates_its_body(
    shared_client: TestClient, shared_memory_id: str, body: dict[str, Any], field: str
) -> None:
    assert_error(shared_client.request("DELETE", f"/memory/{shared_memory_id}", json=body), 400, field)
    assert get(shared_client, shared_memory_id)["deleted_at"] is None


def test_delete_body_that_is_not_an_object_is_400(shared_client: TestClient, shared_memory_id: str) -> None:
    response = shared_client.request("DELETE", f"/memory/{shared_memory_id}", json=["stale"])

    assert_error(response, 400, "body")
    assert get(shared_client, shared_memory_id)["deleted_at"] is None


def test_delete_accepts_a_reason_of_1000_chars(client: TestClient) -> None:
    created = store(client, "Acme's CEO is Wile E. Coyote")

    response = client.request("DELETE", f"/memory/{created['id']}", json={"reason": "r" * 1_000})

    assert response.status_code == 200


def test_delete_malformed_json_is_400(shared_client: TestClient, shared_memory_id: str) -> None:
    response = shared_client.request("DELETE", f"/memory/{shared_memory_id}", content=b'{"reason": ',
                                     headers={"content-type": "application/json"})

    assert_error(response, 400, "body")
    assert get(shared_client, shared_memory_id)["deleted_at"] is None


def test_a_deleted_memory_leaves_search_and_query(client: TestClient) -> None:
    created = store(client, "Acme's staging URL is staging.acme.test", type="fact", key="acme-staging-url")
    assert search_ids(client, "Acme staging URL") == [created["id"]]

    client.delete(f"/memory/{created['id']}")

    assert search_ids(client, "Acme staging URL") == []
    assert search_ids(client, "Acme staging URL", include_superseded="true") == []
    assert query(client, type="facts", key="acme-staging-url", include_superseded="true")["count"] == 0


def test_a_deleted_fact_frees_its_key(client: TestClient) -> None:
    old = store(client, "Acme's staging URL is staging.acme.test", type="fact", key="acme-staging-url")
    client.delete(f"/memory/{old['id']}")

    new = store(client, "Acme's staging URL is stage.acme.dev", type="fact", key="acme-staging-url")

    assert new["supersedes"] is None
    assert get(client, old["id"])["superseded_by"] is None


# -- restore -------------------------------------------------------------------------------------------


@pytest.fixture
def superseded_fact(client: TestClient) -> dict[str, str]:
    old = store(client, "Acme's on-call rotation is managed in Opsgenie", type="fact", client_id="acme-corp",
                key="acme-oncall")
    new = store(client, "Acme's on-call rotation is managed in PagerDuty", type="fact", client_id="acme-corp",
                key="acme-oncall")
    return {"old": old["id"], "new": new["id"]}


def test_restore_unknown_id_is_404(shared_client: TestClient) -> None:
    assert_error(shared_client.post(f"/memory/{MISSING_ID}/restore"), 404)


def test_restore_an_active_memory_is_a_no_op(client: TestClient) -> None:
    created = store(client, "Acme's on-call rotation is managed in PagerDuty")
    before = get(client, created["id"])

    response = client.post(f"/memory/{created['id']}/restore")

    assert response.status_code == 200
    body = response.json()
    assert body["restored"] is False
    assert body["active"] is True
    assert body["superseded"] == []
    assert get(client, created["id"]) == before


def test_restore_a_deleted_memory_is_409(client: TestClient) -> None:
    created = store(client, "Acme's on-call rotation is managed in PagerDuty")
    client.delete(f"/memory/{created['id']}")

    assert_error(client.post(f"/memory/{created['id']}/restore"), 409)
    record = get(client, created["id"])
    assert record["active"] is False and record["deleted_at"] is not None


def test_restore_a_superseded_fact_supersedes_the_current_holder(
    client: TestClient, superseded_fact: dict[str, str]
) -> None:
    response = client.post(f"/memory/{superseded_fact['old']}/restore")

    assert response.status_code == 200
    body = response.json()
    assert body["restored"] is True
    assert body["active"] is True
    assert body["superseded"] == [superseded_fact["new"]]
    old, new = get(client, superseded_fact["old"]), get(client, superseded_fact["new"])
    assert old["active"] is True
    assert old["superseded_by"] is None and old["superseded_at"] is None and old["valid_to"] is None
    assert new["active"] is False
    assert new["superseded_by"] == superseded_fact["old"]
    assert TIMESTAMP.match(new["superseded_at"])
    assert new["valid_to"] == new["superseded_at"]


def test_a_restored_fact_is_what_search_and_query_return(
    client: TestClient, superseded_fact: dict[str, str]
) -> None:
    client.post(f"/memory/{superseded_fact['old']}/restore")

    assert search_ids(client, "Acme on-call rotation tool") == [superseded_fact["old"]]
    facts = query(client, type="facts", key="acme-oncall")["results"]
    assert [fact["id"] for fact in facts] == [superseded_fact["old"]]


def test_restore_twice_is_a_no_op_the_second_time(client: TestClient, superseded_fact: dict[str, str]) -> None:
    client.post(f"/memory/{superseded_fact['old']}/restore")

    body = client.post(f"/memory/{superseded_fact['old']}/restore").json()

    assert body["restored"] is False
    assert get(client, superseded_fact["new"])["active"] is False


def test_restore_a_superseded_status(client: TestClient) -> None:
    old = store(client, "Deploys are frozen for the audit", type="status", subject="deploy-freeze", status_value="on")
    new = store(client, "Deploys are open again", type="status", subject="deploy-freeze", status_value="off")

    body = client.post(f"/memory/{old['id']}/restore").json()

    assert body["superseded"] == [new["id"]]
    assert query(client, type="statuses", subject="deploy-freeze")["results"][0]["status_value"] == "on"


def test_restore_stays_within_the_tenant(client: TestClient, superseded_fact: dict[str, str]) -> None:
    other = store(client, "Globex's on-call rotation is in Opsgenie", type="fact", client_id="globex",
                  key="acme-oncall")

    body = client.post(f"/memory/{superseded_fact['old']}/restore").json()

    assert body["superseded"] == [superseded_fact["new"]]
    assert get(client, other["id"])["active"] is True


def test_restore_after_the_current_holder_was_deleted(
    client: TestClient, superseded_fact: dict[str, str]
) -> None:
    client.delete(f"/memory/{superseded_fact['new']}")

    body = client.post(f"/memory/{superseded_fact['old']}/restore").json()

    assert body["restored"] is True
    assert body["superseded"] == []
    assert get(client, superseded_fact["old"])["active"] is True
    assert get(client, superseded_fact["new"])["superseded_by"] is None


def test_restore_when_the_same_content_is_active_again_is_409(
    client: TestClient, superseded_fact: dict[str, str]
) -> None:
    store(client, "Acme's on-call rotation is managed in Opsgenie", type="fact", client_id="acme-corp")

    assert_error(client.post(f"/memory/{superseded_fact['old']}/restore"), 409)
    assert get(client, superseded_fact["old"])["active"] is False
    assert get(client, superseded_fact["new"])["active"] is True


def test_a_superseded_memory_can_be_deleted_and_then_not_restored(
    client: TestClient, superseded_fact: dict[str, str]
) -> None:
    assert client.delete(f"/memory/{superseded_fact['old']}").status_code == 200

    assert_error(client.post(f"/memory/{superseded_fact['old']}/restore"), 409)
    assert get(client, superseded_fact["new"])["active"] is True
