"""Integrations over HTTP (docs/chat.md, "Integrations"): configuration with its secrets never answered, `test` and
`sync` against a loopback source the test's settings allow, signed inbound webhooks (and their refusals), signed
outbound deliveries verified by a receiver with the SDK's scheme, retried when it fails, with the delivery log; and
every outbound URL the operator did not allow refused with a 400 naming the field."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from zengram.settings import Settings

from tests.api.chat.conftest import ChatClock, chat_settings_for
from tests.api.helpers import assert_error
from tests.integration_receiver import IntegrationReceiver
from tests.llm_server import ScriptedLLMServer

V1 = "/api/v1"
AUTH_SECRET = "sk-live-source-token-0123456789"
WEBHOOK_SECRET = "whsec_receiver_secret_0123456789"


@pytest.fixture
def receiver() -> Iterator[IntegrationReceiver]:
    with IntegrationReceiver(secret=WEBHOOK_SECRET) as running:
        yield running


@pytest.fixture
def chat_settings(llm_settings: Settings, llm_server: ScriptedLLMServer, receiver: IntegrationReceiver) -> Settings:
    """The receiver's loopback address allowed explicitly: the URL prefix and its network."""
    llm_server.default({"memories": []})
    allow = [f"{receiver.base}/", "api.example.com", "10.0.0.7"]
    return chat_settings_for(llm_settings, llm_server, outbound_allow=allow, outbound_allow_networks=["127.0.0.1/32"],
                             integration_delivery_backoff_seconds=0.001)


def create(api: TestClient, **fields: Any) -> dict[str, Any]:
    response = api.post(f"{V1}/integrations", json={"name": "CRM", "mode": "pull", **fields})
    assert response.status_code == 201, response.text
    integration: dict[str, Any] = response.json()["integration"]
    return integration


def test_configuration_round_trip_never_answers_a_secret(api: TestClient, receiver: IntegrationReceiver) -> None:
    made = create(api, integration_id="crm", endpoint_url=receiver.url("/source"), auth_type="bearer",
                  auth_secret=AUTH_SECRET, webhook_secret=WEBHOOK_SECRET, scope="subject",
                  headers_template={"X-Api-Key": "header-secret-value", "Accept": "application/json"},
                  output_map=[{"key": "tier", "path": "$.plan.tier"}])
    assert (made["integration_id"], made["has_auth_secret"], made["has_webhook_secret"]) == ("crm", True, True)
    assert made["headers_template"] == {"X-Api-Key": "********", "Accept": "application/json"}
    for answer in (api.get(f"{V1}/integrations"), api.get(f"{V1}/integrations/crm")):
        assert answer.status_code == 200
        for secret in (AUTH_SECRET, WEBHOOK_SECRET, "header-secret-value"):
            assert secret not in answer.text
    assert assert_error(api.post(f"{V1}/integrations", json={"name": "x", "mode": "webhook",
                                                            "integration_id": "crm"}), 409)
    updated = api.patch(f"{V1}/integrations/crm", json={"is_active": False, "description": "d"}).json()["integration"]
    assert (updated["is_active"], updated["description"], updated["has_auth_secret"]) == (False, "d", True)
    assert api.get(f"{V1}/integrations").json()["count"] == 0  # inactive ones only with include_inactive
    assert api.get(f"{V1}/integrations", params={"include_inactive": True}).json()["count"] == 1
    assert assert_error(api.post(f"{V1}/integrations/crm/test", json={"subject_id": "alice"}), 409)
    assert api.delete(f"{V1}/integrations/crm").json() == {"ok": True, "deleted": True}
    assert_error(api.get(f"{V1}/integrations/crm"), 404)
    assert_error(api.delete(f"{V1}/integrations/crm"), 404)


BAD_CONFIGURATIONS = [
    ({"mode": "pull"}, "endpoint_url"),  # a pull integration needs an endpoint
    ({"mode": "pull", "endpoint_url": "ftp://x"}, "endpoint_url"),
    ({"mode": "webhook", "auth_type": "bearer"}, "auth_secret"),
    ({"mode": "sideways"}, "mode"),
    ({"mode": "webhook", "timeout_ms": 10}, "timeout_ms"),
    ({"mode": "webhook", "output_map": [{"key": "a", "path": "$.a"}, {"key": "a", "path": "$.b"}]}, "output_map"),
]


def test_bad_configuration_is_a_400_naming_the_field(api: TestClient) -> None:
    for fields, field in BAD_CONFIGURATIONS:  # one app for all of them: each case is one request
        assert field in assert_error(api.post(f"{V1}/integrations", json={"name": "x", **fields}), 400), fields


def test_test_reads_values_and_sync_keeps_them_as_one_record(api: TestClient, receiver: IntegrationReceiver) -> None:
    receiver.source = {"plan": {"tier": "pro", "seats": [{"n": 5}]}}
    create(api, integration_id="crm", endpoint_url=receiver.url("/source"), auth_type="bearer",
           auth_secret=AUTH_SECRET, scope="subject", query_template={"who": "{{subject_id}}"},
           output_map=[{"key": "tier", "path": "$.plan.tier"}, {"key": "seats", "path": "plan.seats[0].n"},
                       {"key": "region", "path": "$.region", "default": "eu"}, {"key": "gone", "path": "$.nope"}])
    assert_error(api.post(f"{V1}/integrations/crm/test", json={}), 400).startswith("subject_id:")
    result = api.post(f"{V1}/integrations/crm/test", json={"subject_id": "alice"}).json()["result"]
    assert (result["ok"], result["values"], result["missing"]) == (
        True, {"tier": "pro", "seats": 5, "region": "eu"}, ["gone"])
    assert (result["cache_written"], result["record_id"]) == (False, None)
    call = receiver.received[-1]
    assert call.headers["authorization"] == f"Bearer {AUTH_SECRET}" and call.method == "GET"
    assert call.query == "who=alice"  # the query template, filled in

    synced = api.post(f"{V1}/integrations/crm/sync", json={"subject_id": "alice"}).json()["result"]
    assert synced["ok"] and synced["cache_written"] and synced["record_id"]
    record = api.get(f"{V1}/records/integration_values/{synced['record_id']}").json()
    assert (record["data"]["values"], record["data"]["target"], record["owner_id"]) == (
        {"tier": "pro", "seats": 5, "region": "eu"}, "subject:alice", "alice")
    receiver.source = {"plan": {"tier": "team", "seats": []}}
    again = api.post(f"{V1}/integrations/crm/sync", json={"subject_id": "alice"}).json()["result"]
    assert again["record_id"] == synced["record_id"]  # the same record, its values replaced whole
    assert api.get(f"{V1}/records/integration_values/{synced['record_id']}").json()["data"]["values"] == {
        "tier": "team", "region": "eu"}
    assert api.get(f"{V1}/integrations/crm").json()["integration"]["last_synced_at"] is not None


def test_a_failing_source_is_reported_not_raised(api: TestClient, receiver: IntegrationReceiver) -> None:
    create(api, integration_id="broken", endpoint_url=receiver.url("/missing"))
    result = api.post(f"{V1}/integrations/broken/sync").json()["result"]
    assert (result["ok"], result["status_code"], result["reason"], result["cache_written"]) == (
        False, 404, "the endpoint answered 404", False)


def signed(body: bytes, timestamp: str, secret: str = WEBHOOK_SECRET) -> dict[str, str]:
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return {"x-mnx-webhook-timestamp": timestamp, "x-mnx-webhook-signature": digest,
            "content-type": "application/json"}


def test_an_inbound_webhook_is_verified_taken_once_and_kept(api: TestClient, chat_clock: ChatClock) -> None:
    create(api, integration_id="hook", mode="webhook", webhook_secret=WEBHOOK_SECRET,
           output_map=[{"key": "status", "path": "$.order.status"}])
    body = json.dumps({"order": {"status": "shipped"}}).encode()
    now = str(int(chat_clock.now().timestamp()))
    url = f"{V1}/integrations/hook/webhook"
    taken = api.post(url, content=body, headers={**signed(body, now), "x-event-id": "evt-1"}).json()
    assert (taken["ok"], taken["deduplicated"], taken["values"], taken["keys_written"]) == (
        True, False, {"status": "shipped"}, ["status"])
    assert api.post(url, content=body, headers={**signed(body, now), "x-event-id": "evt-1"}).json()["deduplicated"]
    assert "x-mnx-webhook-signature" in assert_error(
        api.post(url, content=body, headers=signed(body, now, secret="wrong")), 403)
    stale = str(int(chat_clock.now().timestamp()) - 3600)
    assert "x-mnx-webhook-timestamp" in assert_error(api.post(url, content=body, headers=signed(body, stale)), 403)
    assert assert_error(api.post(url, content=body), 400).startswith("x-mnx-webhook-timestamp:")
    record = api.get(f"{V1}/records/integration_values/{taken['record_id']}").json()
    assert (record["data"]["values"], record["data"]["source"]) == ({"status": "shipped"}, "webhook")


def test_deliveries_are_signed_retried_and_logged(api: TestClient, receiver: IntegrationReceiver) -> None:
    create(api, integration_id="sink", mode="webhook", endpoint_url=receiver.url("/hook"),
           webhook_secret=WEBHOOK_SECRET)
    receiver.fail_times = 2
    made = api.post(f"{V1}/integrations/sink/deliveries", json={"event": "memory.created", "data": {"id": "m1"}})
    assert made.status_code == 201, made.text
    delivery = made.json()["delivery"]
    assert delivery["status"] == "delivered"
    assert [a["status_code"] for a in delivery["attempts"]] == [503, 503, 200]
    assert [a["error"] for a in delivery["attempts"]] == ["answered 503", "answered 503", None]
    hooks = receiver.deliveries()
    assert [h.verified for h in hooks] == [True, True, True]  # every attempt signed (the SDK's scheme)
    assert [h.headers["x-mnx-delivery-attempt"] for h in hooks] == ["1", "2", "3"]
    sent = json.loads(hooks[-1].body)
    assert (sent["event"], sent["data"], sent["event_id"]) == ("memory.created", {"id": "m1"}, delivery["event_id"])

    receiver.fail_times = 100
    failed = api.post(f"{V1}/integrations/sink/deliveries", json={"event": "ping"}).json()["delivery"]
    assert (failed["status"], len(failed["attempts"])) == ("failed", 4)  # ZENGRAM_INTEGRATION_DELIVERY_ATTEMPTS
    log = api.get(f"{V1}/integrations/sink/deliveries").json()
    assert [(d["delivery_id"], d["status"]) for d in log["deliveries"]] == [
        (failed["delivery_id"], "failed"), (delivery["delivery_id"], "delivered")]


def test_outbound_urls_outside_the_allow_list_are_refused(api: TestClient, receiver: IntegrationReceiver) -> None:
    refused = assert_error(api.post(f"{V1}/integrations", json={
        "name": "x", "mode": "pull", "endpoint_url": "https://evil.example.net/steal"}), 400)
    assert refused.startswith("endpoint_url:") and "allow-list" in refused
    assert "user info" in assert_error(api.post(f"{V1}/integrations", json={
        "name": "x", "mode": "pull", "endpoint_url": f"http://user:pw@{receiver.base.removeprefix('http://')}/"}), 400)
    create(api, integration_id="ok", endpoint_url=receiver.url("/source"))
    assert assert_error(api.patch(f"{V1}/integrations/ok", json={"endpoint_url": "http://169.254.169.254/latest"}),
                        400).startswith("endpoint_url:")
    # a private address is refused even when the allow-list names it (only 127.0.0.1/32 is an allowed network)
    private = assert_error(api.post(f"{V1}/integrations", json={
        "name": "x", "mode": "pull", "endpoint_url": "http://10.0.0.7/internal"}), 400)
    assert private.startswith("endpoint_url: 10.0.0.7 is a loopback, private or reserved address")
    # a redirect from an allowed URL to one outside the list is not followed
    create(api, integration_id="hop", endpoint_url=receiver.url("/redirect?to=https://evil.example.net/x"))
    hop = assert_error(api.post(f"{V1}/integrations/hop/test"), 400)
    assert hop.startswith("endpoint_url:") and "evil.example.net" in hop


def wait_for(condition: Callable[[], bool], seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_a_scheduled_integration_is_synced_by_the_worker_each_period(
        api: TestClient, receiver: IntegrationReceiver, chat_clock: ChatClock) -> None:
    assert "schedule_seconds" in assert_error(api.post(f"{V1}/integrations", json={
        "name": "x", "mode": "pull", "scope": "subject", "endpoint_url": receiver.url("/source"),
        "schedule_seconds": 60}), 400)  # a subject's integration has no target to sync on its own
    receiver.source = {"rate": 1.1}
    made = create(api, integration_id="fx", endpoint_url=receiver.url("/source"), schedule_seconds=60,
                  output_map=[{"key": "rate", "path": "$.rate"}])
    assert made["next_sync_at"] == made["created_at"]  # never synced: due at once
    # the embedded learning worker's sweep (every 50 ms here) runs the due sync
    assert wait_for(lambda: api.get(f"{V1}/integrations/fx").json()["integration"]["last_synced_at"] is not None)
    calls = len(receiver.received)
    time.sleep(0.3)
    assert len(receiver.received) == calls  # not again before its period …
    receiver.source = {"rate": 1.2}
    chat_clock.advance(seconds=61)
    assert wait_for(lambda: len(receiver.received) > calls)  # … and again after it
    found = api.post(f"{V1}/records/integration_values/query", json={"where": {"integration_id": "fx"}}).json()
    assert wait_for(lambda: api.post(f"{V1}/records/integration_values/query", json={
        "where": {"integration_id": "fx"}}).json()["records"][0]["data"]["values"] == {"rate": 1.2})
    assert len(found["records"]) == 1
    off = api.patch(f"{V1}/integrations/fx", json={"schedule_seconds": 0}).json()["integration"]
    assert off["next_sync_at"] is None
