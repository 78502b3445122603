"""The reflect function answers its sample events from DynamoDB records and the scripted LLM, reading the LLM key
from Secrets Manager (on the moto server) as the template configures it."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from zengram.assembly.provider import ContainerProvider
from zengram.memory.domain.requests import MemoryDraft

from tests.aws_support import REGION, dynamodb_endpoint
from tests.functions.conftest import fresh_container_for
from tests.functions.invoke import invoke, load_event
from tests.llm_server import ScriptedLLMServer

LLM_VARIABLES = ("ZENGRAM_LLM_BASE_URL", "LLM_BASE_URL", "ZENGRAM_LLM_API_KEY", "LLM_API_KEY", "OPENAI_API_KEY",
                 "ZENGRAM_LLM_API_KEY_SECRET_ID")
INVENTED = "99999999-9999-4999-8999-999999999999"


def llm_key_secret(value: str) -> str:
    """A fresh Secrets Manager secret on the moto server (a new name each time: Powertools caches by name)."""
    import boto3

    client = boto3.client("secretsmanager", endpoint_url=dynamodb_endpoint(), region_name=REGION,
                          aws_access_key_id="testing", aws_secret_access_key="testing")
    name = f"zengram-llm-key-{uuid.uuid4().hex[:8]}"
    client.create_secret(Name=name, SecretString=value)
    return name


@pytest.fixture
def no_llm_environment(lambda_environment: str, monkeypatch: pytest.MonkeyPatch) -> str:
    for name in LLM_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return lambda_environment


@pytest.fixture
def llm_key(no_llm_environment: str, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer) -> str:
    """The template's LLM variables, pointed at the scripted server; yields the key kept in Secrets Manager."""
    key = f"sk-from-secrets-manager-{uuid.uuid4().hex[:6]}"
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)  # Lambda sets it beside AWS_REGION; Powertools' boto3 reads it
    monkeypatch.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", dynamodb_endpoint())
    monkeypatch.setenv("ZENGRAM_LLM_API_KEY_SECRET_ID", llm_key_secret(key))
    monkeypatch.setenv("ZENGRAM_LLM_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("ZENGRAM_LLM_MODEL", "llama3.1")
    monkeypatch.setenv("ZENGRAM_LLM_MAX_RETRIES", "0")
    return key


@pytest.fixture
def provider() -> Iterator[ContainerProvider]:
    fresh = fresh_container_for("reflect")
    yield fresh
    fresh.close()


def call(relative: str) -> tuple[int, dict[str, Any]]:
    response = invoke("reflect", load_event(relative))
    return response["statusCode"], json.loads(response["body"])


def store_deploy_memories(provider: ContainerProvider) -> list[str]:
    memory = provider.get().memory
    contents = ["The deployment pipeline failed on a migration timeout",
                "The deployment pipeline now migrates the database before the build"]
    return [memory.store(MemoryDraft.model_validate({
        "type": "event", "content": content, "source_agent": "n8n", "client_id": "acme-corp",
    })).memory.id for content in contents]


def test_reflect_event(llm_key: str, provider: ContainerProvider, llm_server: ScriptedLLMServer) -> None:
    first, second = store_deploy_memories(provider)
    llm_server.script({
        "summary": f"Migrations broke deploys [mem:{first}] [mem:{INVENTED}]",
        "patterns": [f"Migrations first [mem:{second}] [mem:{first}]"],
        "timeline": [], "contradictions": [], "gaps": [],
    })

    status, body = call("reflect/post_reflect.json")

    assert status == 200, body
    assert (body["topic"], body["client_id"], body["memories_analyzed"]) == ("deployment pipeline", "acme-corp", 2)
    assert body["reflection"]["summary"] == f"Migrations broke deploys [mem:{first}]"
    assert body["cited_memory_ids"] == [first, second]
    assert body["llm"] == {"provider": "openai-compatible", "model": "llama3.1"}
    assert llm_server.authorizations == [f"Bearer {llm_key}"]
    assert type(provider.get().records).__name__ == "DynamoDBRecordStore"


def test_invalid_reflect_event_is_400(llm_key: str, provider: ContainerProvider) -> None:
    status, body = call("reflect/post_reflect_invalid.json")
    assert status == 400 and body["error"].startswith("limit:")


def test_without_an_llm_the_function_answers_503(no_llm_environment: str, provider: ContainerProvider) -> None:
    store_deploy_memories(provider)
    status, body = call("reflect/post_reflect.json")
    assert status == 503 and body["error"].startswith(
        "LLM provider unavailable: /reflect needs ZENGRAM_LLM_BASE_URL")  # it names the setting
