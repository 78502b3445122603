"""Every integrations method of the official `mnexium` SDK 0.2.2 (unchanged), against the embedded server on SQLite
and on the DynamoDB host (moto), the fixtures of tests/clients/test_mnexium_sdk.py, with a loopback receiver the
test's settings allow explicitly (ZENGRAM_OUTBOUND_ALLOW and ZENGRAM_OUTBOUND_ALLOW_NETWORKS). `COVERED` lists the
methods driven here; a method the SDK has and this list lacks fails the first test."""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import httpx
import pytest
from mnexium import (
    APIError,
    IntegrationCreateOptions,
    IntegrationExecutionOptions,
    IntegrationListOptions,
    IntegrationOutputMapEntry,
    IntegrationUpdateOptions,
    IntegrationWebhookOptions,
    Mnexium,
    ProviderConfig,
)
from zengram.assembly.containers import build_container
from zengram.embedded.app import build_embedded_app
from zengram.embedded.background import BackgroundServer
from zengram.kernel.ports import Embedder
from zengram.settings import Settings

from tests.api.chat.conftest import OPENAI_KEY, ChatClock
from tests.clients.test_mnexium_sdk import host_settings  # noqa: F401  (a fixture: SQLite and DynamoDB on moto)
from tests.integration_receiver import IntegrationReceiver
from tests.support import API_KEY

COVERED = {"list", "create", "get", "update", "delete", "test", "sync", "sign_webhook", "webhook"}
SOURCE_TOKEN = "sk-source-token-0123456789abcdef"
SECRET = "whsec_sdk_integration_0123456789"


@pytest.fixture
def clock() -> ChatClock:
    return ChatClock()


@pytest.fixture
def receiver() -> Iterator[IntegrationReceiver]:
    with IntegrationReceiver(secret=SECRET) as running:
        yield running


@pytest.fixture
def server(host_settings: Settings, minilm: Embedder, clock: ChatClock,  # noqa: F811
           receiver: IntegrationReceiver) -> Iterator[BackgroundServer]:
    settings = host_settings.model_copy(update={"outbound_allow": [f"{receiver.base}/"],
                                                "outbound_allow_networks": ["127.0.0.1/32"],
                                                "integration_delivery_backoff_seconds": 0.001})
    container = build_container(settings, embedder=minilm, clock=clock)
    try:
        with BackgroundServer(build_embedded_app(settings, container)) as running:
            yield running
    finally:
        container.close()


@pytest.fixture
def mnx(server: BackgroundServer) -> Iterator[Mnexium]:
    with Mnexium(api_key=API_KEY, base_url=f"{server.url}/api/v1", openai=ProviderConfig(api_key=OPENAI_KEY),
                 max_retries=0) as client:
        yield client


def test_the_covered_list_is_every_integrations_method_of_the_sdk() -> None:
    client = Mnexium(api_key="listing-only", base_url="http://127.0.0.1:9/api/v1", max_retries=0)
    found = {name for name, _ in inspect.getmembers(type(client.integrations), inspect.isfunction)
             if not name.startswith("_")}
    assert found == COVERED


def test_the_sdk_drives_every_integrations_method(mnx: Mnexium, receiver: IntegrationReceiver,
                                                  clock: ChatClock) -> None:
    receiver.source = {"account": {"plan": "pro", "seats": 12}}
    # create, get, list, update
    made = mnx.integrations.create(IntegrationCreateOptions(
        name="CRM", mode="both", integration_id="crm", scope="subject", endpoint_url=receiver.url("/source"),
        auth_type="bearer", auth_secret=SOURCE_TOKEN, webhook_secret=SECRET,
        output_map=[IntegrationOutputMapEntry(key="plan", path="$.account.plan"),
                    IntegrationOutputMapEntry(key="seats", path="$.account.seats")]))
    assert (made["integration_id"], made["has_auth_secret"], made["has_webhook_secret"]) == ("crm", True, True)
    assert "auth_secret" not in made and "webhook_secret" not in made
    assert mnx.integrations.get("crm")["name"] == "CRM"
    assert mnx.integrations.get("nothing") is None
    assert [i["integration_id"] for i in mnx.integrations.list()] == ["crm"]
    updated = mnx.integrations.update("crm", IntegrationUpdateOptions(description="the CRM", timeout_ms=2000))
    assert (updated["description"], updated["timeout_ms"], updated["has_auth_secret"]) == ("the CRM", 2000, True)

    # test (keeps nothing), sync (keeps the values)
    tested = mnx.integrations.test("crm", IntegrationExecutionOptions(subject_id="alice"))
    assert (tested["ok"], tested["values"], tested["cache_written"]) == (True, {"plan": "pro", "seats": 12}, False)
    assert receiver.received[-1].headers["authorization"] == f"Bearer {SOURCE_TOKEN}"
    synced = mnx.integrations.sync("crm", IntegrationExecutionOptions(subject_id="alice"))
    assert (synced["ok"], synced["cache_written"], synced["scope"]) == (True, True, "subject")

    # sign_webhook (local), webhook (a signed push the server verifies)
    now = int(clock.now().timestamp())
    signature = mnx.integrations.sign_webhook({"account": {"plan": "team"}}, secret=SECRET, timestamp=now)
    assert signature.timestamp == str(now) and len(signature.signature) == 64
    pushed = mnx.integrations.webhook("crm", {"account": {"plan": "team", "seats": 3}}, IntegrationWebhookOptions(
        secret=SECRET, timestamp=now, event_id="evt-1", subject_id="alice"))
    assert (pushed["ok"], pushed["deduplicated"], pushed["values"]) == (True, False, {"plan": "team", "seats": 3})
    assert pushed["record_id"] == synced["record_id"]  # the same record as alice's sync: values replaced
    again = mnx.integrations.webhook("crm", {"account": {"plan": "team"}}, IntegrationWebhookOptions(
        secret=SECRET, timestamp=now, event_id="evt-1", subject_id="alice"))
    assert again["deduplicated"] is True
    with pytest.raises(APIError) as forged:
        mnx.integrations.webhook("crm", {"account": {}}, IntegrationWebhookOptions(
            secret="not-the-secret", timestamp=now, subject_id="alice"))
    assert forged.value.status == 403

    # deactivate: list hides it unless asked; delete
    mnx.integrations.update("crm", IntegrationUpdateOptions(is_active=False))
    assert mnx.integrations.list() == []
    assert len(mnx.integrations.list(IntegrationListOptions(include_inactive=True))) == 1
    assert mnx.integrations.delete("crm") is None
    assert mnx.integrations.get("crm") is None


def test_deliveries_are_signed_retried_and_logged_on_this_store(mnx: Mnexium, server: BackgroundServer,
                                                                receiver: IntegrationReceiver) -> None:
    """Not an SDK method: the delivery routes over HTTP, on the same host (SQLite or DynamoDB)."""
    mnx.integrations.create(IntegrationCreateOptions(name="sink", mode="webhook", integration_id="sink", output_map=[],
                                                     endpoint_url=receiver.url("/hook"), webhook_secret=SECRET))
    receiver.fail_times = 1
    with httpx.Client(base_url=f"{server.url}/api/v1", headers={"x-mnexium-key": API_KEY}) as http:
        made = http.post("/integrations/sink/deliveries", json={"event": "ping", "data": [1]})
        assert made.status_code == 201, made.text
        assert [a["status_code"] for a in made.json()["delivery"]["attempts"]] == [503, 200]
        log = http.get("/integrations/sink/deliveries").json()["deliveries"]
    assert [d["status"] for d in log] == ["delivered"]
    assert [hook.verified for hook in receiver.deliveries()] == [True, True]


def test_an_endpoint_outside_the_allow_list_is_refused_through_the_sdk(mnx: Mnexium) -> None:
    with pytest.raises(APIError) as refused:
        mnx.integrations.create(IntegrationCreateOptions(name="x", mode="pull", output_map=[],
                                                         endpoint_url="http://10.0.0.7/internal"))
    assert refused.value.status == 400 and "endpoint_url" in str(refused.value)
