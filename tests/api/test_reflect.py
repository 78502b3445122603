"""POST /reflect: the memories about a topic, synthesised by a (scripted) LLM, with checked citations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import build_container
from zengram.embedded.app import build_embedded_app
from zengram.settings import Settings

from tests.api.helpers import assert_error, get, store
from tests.llm_server import TEST_LLM_MODEL, ScriptedLLMServer
from tests.support import API_KEY, HashingEmbedder, TickingClock

INVENTED = "99999999-9999-4999-8999-999999999999"


def app_client(settings: Settings) -> Iterator[TestClient]:
    container = build_container(settings, embedder=HashingEmbedder(), clock=TickingClock())
    try:
        with TestClient(build_embedded_app(settings, container), headers={"x-api-key": API_KEY}) as test_client:
            yield test_client
    finally:
        container.close()


@pytest.fixture
def reflect_client(llm_settings: Settings) -> Iterator[TestClient]:
    """The embedded app with its language model pointed at the scripted server."""
    yield from app_client(llm_settings)


@pytest.fixture
def unconfigured_client(settings: Settings) -> Iterator[TestClient]:
    """The embedded app with no LLM provider (whatever this machine's environment says)."""
    yield from app_client(settings.model_copy(update={
        "llm_base_url": None, "llm_api_key": None, "llm_api_key_secret_id": None,
    }))


def deploy_memories(client: TestClient) -> list[str]:
    contents = [
        "Deploy pipeline failed on Friday because the staging database migration timed out",
        "Deploy pipeline now runs database migrations before the build step",
        "Decided to freeze deploys of the pipeline on Fridays",
    ]
    return [store(client, content, client_id="acme-corp")["id"] for content in contents]


def reflection(summary: str = "Summary", **lists: list[str]) -> dict[str, Any]:
    entries = {"patterns": [], "timeline": [], "contradictions": [], "gaps": []}
    return {"summary": summary, **entries, **lists}


def reflect(client: TestClient, expect: int = 200, **body: Any) -> dict[str, Any]:
    response = client.post("/reflect", json={"topic": "deployment pipeline", **body})
    assert response.status_code == expect, response.text
    answer: dict[str, Any] = response.json()
    return answer


def prompt_of(request: dict[str, Any]) -> str:
    user: str = request["messages"][-1]["content"]
    return user


def test_answers_in_the_documented_shape(reflect_client: TestClient, llm_server: ScriptedLLMServer) -> None:
    first, second, third = deploy_memories(reflect_client)
    llm_server.script(reflection(
        f"Friday deploys failed on migrations [mem:{first}].",
        patterns=[f"Migrations break deploys [mem:{first}] [mem:{second}]"],
        timeline=[f"2026-03-01: deploy failed [mem:{first}]", f"2026-03-01: freeze decided [mem:{third}]"],
        contradictions=[],
        gaps=["Nobody recorded whether the freeze was lifted"],
    ))

    body = reflect(reflect_client, client_id="acme-corp", limit=20)

    assert list(body) == ["topic", "client_id", "memories_analyzed", "reflection", "cited_memory_ids", "llm"]
    assert (body["topic"], body["client_id"], body["memories_analyzed"]) == ("deployment pipeline", "acme-corp", 3)
    assert list(body["reflection"]) == ["summary", "patterns", "timeline", "contradictions", "gaps"]
    assert body["reflection"]["gaps"] == ["Nobody recorded whether the freeze was lifted"]
    assert body["cited_memory_ids"] == [first, second, third]
    assert body["llm"] == {"provider": "openai-compatible", "model": TEST_LLM_MODEL}


def test_the_llm_sees_the_topic_and_every_memory_under_its_id(
    reflect_client: TestClient, llm_server: ScriptedLLMServer
) -> None:
    ids = deploy_memories(reflect_client)
    llm_server.script(reflection())
    reflect(reflect_client, client_id="acme-corp")

    [request] = llm_server.requests
    assert request["response_format"] == {"type": "json_object"}
    prompt = prompt_of(request)
    assert "Topic: deployment pipeline" in prompt
    assert all(f"[mem:{memory_id}]" in prompt for memory_id in ids)
    assert "staging database migration timed out" in prompt


def test_invented_citations_are_stripped_and_cited_ids_deduplicated(
    reflect_client: TestClient, llm_server: ScriptedLLMServer
) -> None:
    first, second, _ = deploy_memories(reflect_client)
    llm_server.script(reflection(
        f"Migrations [mem:{second}] keep failing [mem:{INVENTED}].",
        patterns=[f"Friday failures [mem:{first}] [mem:{second}]", f"[mem:{INVENTED}]"],
        contradictions=[f"Freeze versus fix [mem:{INVENTED}, mem:{first}]"],
    ))

    body = reflect(reflect_client, client_id="acme-corp")

    assert body["reflection"]["summary"] == f"Migrations [mem:{second}] keep failing."
    assert body["reflection"]["patterns"] == [f"Friday failures [mem:{first}] [mem:{second}]"]
    assert body["reflection"]["contradictions"] == [f"Freeze versus fix [mem:{first}]"]
    assert body["cited_memory_ids"] == [second, first]
    assert INVENTED not in str(body)


def test_another_tenants_memories_are_neither_shown_nor_citable(
    reflect_client: TestClient, llm_server: ScriptedLLMServer
) -> None:
    ours = deploy_memories(reflect_client)
    theirs = store(reflect_client, "Deploy pipeline of globex broke on the deployment of Friday",
                   client_id="globex")["id"]
    llm_server.script(reflection(f"Both broke [mem:{ours[0]}] [mem:{theirs}]"))

    body = reflect(reflect_client, client_id="acme-corp")

    assert theirs not in prompt_of(llm_server.requests[0])
    assert body["reflection"]["summary"] == f"Both broke [mem:{ours[0]}]"
    assert body["cited_memory_ids"] == [ours[0]]
    assert body["memories_analyzed"] == 3


def test_limit_caps_the_memories_analysed(reflect_client: TestClient, llm_server: ScriptedLLMServer) -> None:
    ids = deploy_memories(reflect_client)
    llm_server.script(reflection())
    body = reflect(reflect_client, client_id="acme-corp", limit=2)
    assert body["memories_analyzed"] == 2
    assert sum(f"[mem:{memory_id}]" in prompt_of(llm_server.requests[0]) for memory_id in ids) == 2


def test_a_bad_answer_is_asked_for_again(reflect_client: TestClient, llm_server: ScriptedLLMServer) -> None:
    first, _, _ = deploy_memories(reflect_client)
    llm_server.script({"summary": "no lists"}, reflection(f"Fixed [mem:{first}]"))
    body = reflect(reflect_client, client_id="acme-corp")
    assert body["cited_memory_ids"] == [first]
    assert len(llm_server.requests) == 2


def test_two_bad_answers_are_a_502(reflect_client: TestClient, llm_server: ScriptedLLMServer) -> None:
    deploy_memories(reflect_client)
    llm_server.script("I think the pipeline is fine.", {"summary": ["not", "a", "string"]})
    response = reflect_client.post("/reflect", json={"topic": "deployment pipeline"})
    message = assert_error(response, 502)
    assert "invalid JSON" in message or "valid JSON" in message
    assert len(llm_server.requests) == 2


def test_an_unreachable_llm_is_a_503(reflect_client: TestClient, llm_server: ScriptedLLMServer) -> None:
    deploy_memories(reflect_client)
    # Nothing scripted: the server answers 500, which the SDK (no retries in tests) reports as unavailable.
    assert_error(reflect_client.post("/reflect", json={"topic": "deployment pipeline"}), 503)


# Issue 37: the message names the settings, as /consolidate's does.
NO_PROVIDER = ("LLM provider unavailable: /reflect needs ZENGRAM_LLM_BASE_URL (an OpenAI-compatible endpoint, "
               "e.g. Ollama) or ZENGRAM_LLM_API_KEY (OpenAI); see docs/settings.md")


def test_without_a_provider_it_is_a_503(unconfigured_client: TestClient) -> None:
    deploy_memories(unconfigured_client)
    message = assert_error(unconfigured_client.post("/reflect", json={"topic": "deployment pipeline"}), 503)
    assert message == NO_PROVIDER


def test_without_a_provider_it_is_a_503_even_with_nothing_stored(unconfigured_client: TestClient) -> None:
    message = assert_error(unconfigured_client.post("/reflect", json={"topic": "deployment pipeline"}), 503)
    assert message == NO_PROVIDER


def test_no_memories_answers_without_asking_the_llm(
    reflect_client: TestClient, llm_server: ScriptedLLMServer
) -> None:
    store(reflect_client, "Deploy pipeline notes for globex", client_id="globex")
    body = reflect(reflect_client, client_id="acme-corp")

    assert llm_server.requests == []
    assert body["memories_analyzed"] == 0
    assert body["cited_memory_ids"] == []
    assert body["reflection"]["patterns"] == body["reflection"]["timeline"] == []
    assert body["reflection"]["contradictions"] == []
    assert body["reflection"]["gaps"] == ["Nothing has been stored about: deployment pipeline"]
    assert body["llm"] == {"provider": "openai-compatible", "model": TEST_LLM_MODEL}


def test_reflecting_does_not_count_as_accessing_the_memories(
    reflect_client: TestClient, llm_server: ScriptedLLMServer
) -> None:
    ids = deploy_memories(reflect_client)
    llm_server.script(reflection())
    reflect(reflect_client, client_id="acme-corp")
    assert [get(reflect_client, memory_id)["access_count"] for memory_id in ids] == [0, 0, 0]


@pytest.mark.parametrize(("body", "field"), [
    ({}, "topic"),
    ({"topic": "   "}, "topic"),
    ({"topic": 42}, "topic"),
    ({"topic": "x" * 501}, "topic"),
    ({"topic": "deploys", "limit": 0}, "limit"),
    ({"topic": "deploys", "limit": 51}, "limit"),
    ({"topic": "deploys", "limit": "ten"}, "limit"),
    ({"topic": "deploys", "limit": "20"}, "limit"),
    ({"topic": "deploys", "client_id": "acme corp!"}, "client_id"),
])
def test_invalid_bodies_are_400_naming_the_field(
    unconfigured_client: TestClient, body: dict[str, Any], field: str
) -> None:
    assert_error(unconfigured_client.post("/reflect", json=body), 400, field)


def test_a_body_that_is_not_an_object_is_a_400(unconfigured_client: TestClient) -> None:
    assert_error(unconfigured_client.post("/reflect", json=["deploys"]), 400, "body")


def test_a_500_character_topic_and_limit_50_are_accepted(
    reflect_client: TestClient, llm_server: ScriptedLLMServer
) -> None:
    deploy_memories(reflect_client)
    llm_server.script(reflection())
    body = reflect(reflect_client, topic="deployment pipeline " + "x" * 480, limit=50)
    assert body["memories_analyzed"] == 3


def test_reflect_needs_the_api_key(unconfigured_client: TestClient) -> None:
    response = unconfigured_client.post("/reflect", json={"topic": "deploys"}, headers={"x-api-key": ""})
    assert_error(response, 401)
