"""The HTTP API's authorizer on DynamoDB (moto): it verifies the bootstrap key and scoped keys with the check the
functions run, answers API Gateway's simple response, and hands the key's scope on as the request context, which
the functions then trust instead of verifying the key again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from zengram.assembly.provider import ContainerProvider
from zengram.kernel.keys import BOOTSTRAP_KEY_ID, KeyDraft, MintedKey, Principal, Role
from zengram.serverless import handlers as serverless

from tests.functions.conftest import SAMPLE_KEY, fresh_container_for
from tests.functions.invoke import invoke, load_event


@pytest.fixture
def provider(lambda_environment: str) -> Iterator[ContainerProvider]:
    serverless._key_service.cache_clear()  # a new execution environment: the authorizer's store is this test's table
    memory = fresh_container_for("memory")
    yield memory
    memory.close()
    serverless._key_service.cache_clear()


def authorize(relative: str, key: str | None = None, **overrides: Any) -> dict[str, Any]:
    """The authorizer's answer to a sample event; `key` replaces the sample key in the header and identity source."""
    event = load_event(relative, **overrides)
    if key is not None:
        event["identitySource"] = [key]
        event["headers"]["x-api-key"] = key
    return invoke("authorizer", event)


def mint(provider: ContainerProvider, role: Role, clients: list[str] | None) -> MintedKey:
    return provider.get().keys.create(KeyDraft(name=f"{role.value}-agent", role=role, clients=clients))


def test_the_bootstrap_key_is_an_admin_of_every_client(provider: ContainerProvider) -> None:
    answer = authorize("authorizer/api_key.json")
    assert answer == {"isAuthorized": True, "context": {"key_id": BOOTSTRAP_KEY_ID, "name": answer["context"]["name"],
                                                        "role": "admin", "clients": "null"}}


def test_a_scoped_key_passes_its_id_role_and_clients(provider: ContainerProvider) -> None:
    minted = mint(provider, Role.WRITE, ["globex", "acme-corp"])
    answer = authorize("authorizer/api_key.json", minted.key)
    assert answer == {"isAuthorized": True, "context": {"key_id": minted.record.id, "name": "write-agent",
                                                        "role": "write", "clients": '["acme-corp", "globex"]'}}
    assert minted.key not in json.dumps(answer)  # the context names the key, never carries it
    principal = Principal.from_claims(answer["context"])
    assert principal == minted.record.principal


@pytest.mark.parametrize("relative", ["authorizer/bearer_token.json", "authorizer/mnexium_key.json"])
def test_every_client_familys_header_is_verified(provider: ContainerProvider, relative: str) -> None:
    assert authorize(relative)["isAuthorized"] is True
    event = load_event(relative)
    event["identitySource"] = [value.replace(SAMPLE_KEY, "wrong-key") for value in event["identitySource"]]
    assert invoke("authorizer", event) == {"isAuthorized": False}


def test_invalid_forged_and_revoked_keys_are_refused(provider: ContainerProvider) -> None:
    assert authorize("authorizer/invalid_key.json") == {"isAuthorized": False}
    minted = mint(provider, Role.READ, ["acme-corp"])
    forged = minted.key[:-4] + ("AAAA" if not minted.key.endswith("AAAA") else "BBBB")
    assert authorize("authorizer/api_key.json", forged) == {"isAuthorized": False}
    assert authorize("authorizer/api_key.json", minted.key)["isAuthorized"] is True
    provider.get().keys.revoke(minted.record.id)
    assert authorize("authorizer/api_key.json", minted.key) == {"isAuthorized": False}


def test_the_cached_header_is_what_gets_verified(provider: ContainerProvider) -> None:
    """API Gateway caches the answer under the identity source's value: that value is the key checked, whatever
    other key header the request carries (else one key's verdict could be cached under another's value)."""
    event = load_event("authorizer/bearer_token.json")
    event["headers"]["x-api-key"] = SAMPLE_KEY
    event["identitySource"] = ["Bearer wrong-key"]
    assert invoke("authorizer", event) == {"isAuthorized": False}


def test_without_an_identity_source_the_request_headers_are_read(provider: ContainerProvider) -> None:
    """An authorizer without caching gets no identity source: the first key header of the request counts."""
    event = load_event("authorizer/bearer_token.json")
    del event["identitySource"]
    assert invoke("authorizer", event)["isAuthorized"] is True
    event["headers"] = {"authorization": "Basic c2FtcGxl"}  # not a bearer token: no key at all
    assert invoke("authorizer", event) == {"isAuthorized": False}


def test_the_authorizer_logs_no_key(provider: ContainerProvider, caplog: pytest.LogCaptureFixture) -> None:
    minted = mint(provider, Role.READ, ["acme-corp"])
    authorize("authorizer/api_key.json", minted.key)
    authorize("authorizer/api_key.json", minted.key + "x")
    logged = " ".join(f"{record.getMessage()} {record.__dict__}" for record in caplog.records)
    assert "authorizer verdict" in logged and minted.record.id in logged
    assert minted.key not in logged and SAMPLE_KEY not in logged


# ---- a function behind the authorizer ----

def call(relative: str, **changes: Any) -> tuple[int, dict[str, Any]]:
    event = load_event(relative)
    for name, value in changes.items():
        event["requestContext"]["authorizer"]["lambda"][name] = value
    response = invoke("memory", event)
    return response["statusCode"], json.loads(response["body"])


def test_a_function_serves_the_caller_the_authorizer_verified(provider: ContainerProvider) -> None:
    """No key header at all: the claims in the context are the caller, with the role and clients they name."""
    assert "x-api-key" not in load_event("memory/get_search_authorized.json")["headers"]
    status, found = call("memory/get_search_authorized.json")
    assert status == 200 and found["count"] == 0
    assert call("memory/get_search_authorized.json", clients='["globex"]')[0] == 403  # not one of its clients
    assert call("memory/post_memory_authorized.json")[0] == 403  # a read key may not write
    status, stored = call("memory/post_memory_authorized.json", role="write")
    assert status == 201, stored
    status, found = call("memory/get_search_authorized.json")
    assert [hit["id"] for hit in found["results"]] == [stored["id"]]


def test_the_context_is_trusted_without_a_key_lookup(provider: ContainerProvider) -> None:
    """API Gateway invoked the function only after the authorizer allowed the key (within its cache TTL), so the
    function does not read the key store again: a key revoked meanwhile still passes until the cache expires."""
    minted = mint(provider, Role.READ, ["acme-corp"])
    provider.get().keys.revoke(minted.record.id)
    assert call("memory/get_search_authorized.json", key_id=minted.record.id)[0] == 200


def test_without_a_context_the_function_verifies_the_key_itself(provider: ContainerProvider) -> None:
    event = load_event("memory/get_search_authorized.json")
    del event["requestContext"]["authorizer"]
    response = invoke("memory", event)
    assert response["statusCode"] == 401  # a direct invocation without a key
    event["headers"]["authorization"] = f"Bearer {SAMPLE_KEY}"
    assert invoke("memory", event)["statusCode"] == 200


def test_a_malformed_context_is_not_trusted(provider: ContainerProvider) -> None:
    event = load_event("memory/get_search_authorized.json")
    event["requestContext"]["authorizer"]["lambda"] = {"key_id": "x", "role": "owner"}
    assert invoke("memory", event)["statusCode"] == 401  # verified like a direct call: no key, refused
