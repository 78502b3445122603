"""The pure rules of integrations: reading values through an output map, masking secrets, templates, the webhook
signature (the Mnexium SDK's `sign_webhook` scheme) and its verification, and the delivery backoff."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from mnexium import Mnexium
from zengram.chat.domain.integrations import (
    Integration,
    IntegrationCreate,
    IntegrationUpdate,
    OutputMapEntry,
    auth_headers,
    extract,
    masked,
    render,
)
from zengram.chat.domain.webhooks import DeliveryPolicy, retryable, signature, signed_headers, verify
from zengram.kernel.errors import Forbidden, InvalidInput

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SECRET = "whsec_rules"


def entries(*pairs: tuple[str, str]) -> list[OutputMapEntry]:
    return [OutputMapEntry(key=key, path=path) for key, path in pairs]


def test_paths_read_nested_fields_lists_and_quoted_names() -> None:
    answer = {"a": {"b": [{"c": 1}, {"c": 2}]}, "odd.name": "x", "list": [10, 20]}
    values, missing = extract(answer, entries(("first", "$.a.b[0].c"), ("last", "a.b.1.c"), ("odd", "$['odd.name']"),
                                              ("tail", "$.list[-1]"), ("none", "$.a.z")))
    assert (values, missing) == ({"first": 1, "last": 2, "odd": "x", "tail": 20}, ["none"])
    with_default = [OutputMapEntry(key="tier", path="$.tier", default="free")]
    assert extract({}, with_default) == ({"tier": "free"}, [])
    assert extract([1, 2], []) == ({"data": [1, 2]}, [])  # no output map: the answer itself


def test_secrets_are_masked_by_name_and_never_in_public() -> None:
    assert masked({"Authorization": "Bearer x", "X-Api-Key": "k", "Accept": "json", "x-session": ""}) == {
        "Authorization": "********", "X-Api-Key": "********", "Accept": "json", "x-session": ""}
    made = Integration.new("crm", "acme", IntegrationCreate(
        name="CRM", mode="webhook", auth_type="basic", auth_secret="pw", webhook_secret=SECRET,
        auth_config={"username": "bob", "password_hint": "h"}), NOW)
    public = made.public()
    assert "pw" not in json.dumps(public) and SECRET not in json.dumps(public)
    assert public["auth_config"] == {"username": "bob", "password_hint": "********"}
    assert auth_headers(made) == {"Authorization": "Basic Ym9iOnB3"}  # bob:pw
    # what a client read (masked) and sends back keeps the stored secret; a new value replaces it
    edited = made.updated(IntegrationUpdate(auth_config={**public["auth_config"], "username": "eve"}), NOW)
    assert edited.auth_config == {"username": "eve", "password_hint": "h"}
    assert made.updated(IntegrationUpdate(auth_config={"password_hint": "new"}), NOW).auth_config == {
        "password_hint": "new"}


def test_templates_fill_known_variables_only() -> None:
    assert render({"q": "{{ subject_id }}-{{chat_id}}", "n": [1, "{{other}}"]}, {"subject_id": "alice"}) == {
        "q": "alice-", "n": [1, "{{other}}"]}


def test_a_signature_is_what_the_sdk_computes() -> None:
    payload = {"order": {"id": 7, "note": "café"}}
    sdk = Mnexium(api_key="k", base_url="http://127.0.0.1:9/api/v1", max_retries=0)
    expected = sdk.integrations.sign_webhook(payload, secret=SECRET, timestamp=1700000000).signature
    assert signature(SECRET, "1700000000", json.dumps(payload)) == expected
    headers = signed_headers(SECRET, json.dumps(payload), NOW, "evt-1")
    assert headers["x-mnx-webhook-signature"] == sdk.integrations.sign_webhook(
        payload, secret=SECRET, timestamp=headers["x-mnx-webhook-timestamp"]).signature


def test_verification_takes_the_raw_or_the_sdk_body_and_refuses_the_rest() -> None:
    payload = {"a": [1, 2]}
    compact = json.dumps(payload, separators=(",", ":")).encode()  # what the SDK's HTTP client sends
    stamp = str(int(NOW.timestamp()))
    assert verify(SECRET, stamp, signature(SECRET, stamp, json.dumps(payload)), compact, NOW) == payload
    assert verify(SECRET, stamp, "sha256=" + signature(SECRET, stamp, compact).upper(), compact, NOW) == payload
    with pytest.raises(Forbidden, match="x-mnx-webhook-signature"):
        verify(SECRET, stamp, signature("other", stamp, compact), compact, NOW)
    with pytest.raises(Forbidden, match="x-mnx-webhook-timestamp"):
        verify(SECRET, stamp, signature(SECRET, stamp, compact), compact, NOW + timedelta(minutes=6))
    with pytest.raises(InvalidInput, match=r"^x-mnx-webhook-timestamp"):
        verify(SECRET, "soon", "00", compact, NOW)
    with pytest.raises(InvalidInput, match=r"^body"):
        verify(SECRET, stamp, signature(SECRET, stamp, b"{"), b"{", NOW)


def test_backoff_doubles_to_its_cap_and_only_some_answers_are_retried() -> None:
    policy = DeliveryPolicy(attempts=6, backoff_seconds=0.5, max_backoff_seconds=3)
    assert [policy.wait_after(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert [retryable(status) for status in (0, 408, 429, 500, 503, 400, 401, 404)] == [
        True, True, True, True, True, False, False, False]
