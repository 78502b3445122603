"""POST /research on the embedded app: the loop in process, the LLM a scripted OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import build_container
from zengram.embedded.app import build_embedded_app
from zengram.memory.domain.llm import MAX_CHARS_PER_MEMORY
from zengram.memory.domain.requests import MAX_CONTENT_CHARS
from zengram.settings import Settings

from tests.api.helpers import assert_error, store
from tests.llm_server import TEST_LLM_MODEL, ScriptedLLMServer
from tests.support import API_KEY, HashingEmbedder, TickingClock

TOPIC = "which decision superseded the caching approach, and what status did it leave the API in?"
INVENTED = "99999999-9999-4999-8999-999999999999"


def app_client(settings: Settings) -> Iterator[TestClient]:
    container = build_container(settings, embedder=HashingEmbedder(), clock=TickingClock())
    try:
        with TestClient(build_embedded_app(settings, container), headers={"x-api-key": API_KEY}) as test_client:
            yield test_client
    finally:
        container.close()


@pytest.fixture
def research_client(llm_settings: Settings) -> Iterator[TestClient]:
    yield from app_client(llm_settings.model_copy(update={"research_enabled": True}))


@pytest.fixture
def disabled_client(llm_settings: Settings) -> Iterator[TestClient]:
    yield from app_client(llm_settings)


def caching_memories(client: TestClient) -> dict[str, str]:
    memories = {
        "decision": store(client, "Decided to replace the Redis caching approach with HTTP cache headers",
                          type="decision", client_id="acme-corp")["id"],
        "status": store(client, "The public API is in maintenance mode after the caching change", type="status",
                        subject="public-api", status_value="maintenance", client_id="acme-corp")["id"],
        "other_tenant": store(client, "Decided to keep the Redis caching approach", type="decision",
                              client_id="globex")["id"],
    }
    return memories


def judged(status: str, *missing: str) -> dict[str, Any]:
    return {"draft": "draft", "status": status, "reason": f"reason {status}", "missing": list(missing)}


def research(client: TestClient, expect: int = 200, **body: Any) -> dict[str, Any]:
    response = client.post("/research", json={"topic": TOPIC, **body})
    assert response.status_code == expect, response.text
    answer: dict[str, Any] = response.json()
    return answer


def test_answers_in_the_documented_shape(research_client: TestClient, llm_server: ScriptedLLMServer) -> None:
    ids = caching_memories(research_client)
    llm_server.script(
        judged("INSUFFICIENT", "public API status after the caching change"),
        judged("SUFFICIENT"),
        {"answer": f"HTTP cache headers replaced Redis [mem:{ids['decision']}] [mem:{INVENTED}]; the API is in "
                   f"maintenance [mem:{ids['status']}].",
         "key_findings": [f"Redis caching was replaced [mem:{ids['decision']}]"],
         "unresolved": ["When maintenance ends"]},
    )

    body = research(research_client, client_id="acme-corp", max_iterations=3)

    assert list(body) == ["topic", "answer", "key_findings", "unresolved", "cited_memory_ids", "partial",
                          "iterations", "memories_analyzed", "query_trace", "sufficiency", "llm"]
    assert body["topic"] == TOPIC
    assert body["answer"] == (f"HTTP cache headers replaced Redis [mem:{ids['decision']}]; the API is in "
                              f"maintenance [mem:{ids['status']}].")
    assert body["key_findings"] == [f"Redis caching was replaced [mem:{ids['decision']}]"]
    assert body["unresolved"] == ["When maintenance ends"]
    assert body["cited_memory_ids"] == [ids["decision"], ids["status"]]
    assert body["partial"] is False and body["iterations"] == 2
    assert [trace["query"] for trace in body["query_trace"]] == [TOPIC, "public API status after the caching change"]
    assert body["query_trace"][-1]["cumulative"] == body["memories_analyzed"] == 2  # the other tenant never shows
    assert body["sufficiency"] == {"status": "SUFFICIENT", "reason": "reason SUFFICIENT", "missing": []}
    assert body["llm"] == {"provider": "openai-compatible", "model": TEST_LLM_MODEL}
    assert len(llm_server.requests) == 3 and llm_server.pending == 0
    synthesis_prompt = llm_server.requests[-1]["messages"][-1]["content"]
    assert f"[mem:{ids['decision']}]" in synthesis_prompt and ids["other_tenant"] not in synthesis_prompt


def test_each_memory_reaches_the_prompts_cut_to_the_cap(research_client: TestClient,
                                                         llm_server: ScriptedLLMServer) -> None:
    # Given a memory of the largest size a memory may have (10,000 characters), words unique to each stretch
    content = "Redis caching approach superseded by cache headers. " + " ".join(
        f"detail{n:05d}" for n in range(1_000))
    content = content[:MAX_CONTENT_CHARS]
    assert len(content) == MAX_CONTENT_CHARS
    memory_id = store(research_client, content, type="decision", client_id="acme-corp")["id"]
    llm_server.script(judged("SUFFICIENT"), {"answer": "Cache headers [mem:" + memory_id + "]."})

    research(research_client, client_id="acme-corp", max_iterations=1)

    # Then both the judge and the synthesizer saw it cut to the cap, an ellipsis marking the cut
    prompts = [request["messages"][-1]["content"] for request in llm_server.requests]
    assert len(prompts) == 2
    for prompt in prompts:
        assert f"[mem:{memory_id}]" in prompt
        assert content[:MAX_CHARS_PER_MEMORY] + "…" in prompt
        assert content[MAX_CHARS_PER_MEMORY:MAX_CHARS_PER_MEMORY + 40] not in prompt
        assert len(prompt) < MAX_CHARS_PER_MEMORY + 1_000


def test_budget_exhausted_is_partial(research_client: TestClient, llm_server: ScriptedLLMServer) -> None:
    caching_memories(research_client)
    llm_server.script(judged("INSUFFICIENT", "cache headers rollout date"),
                      {"answer": "Unclear.", "key_findings": [], "unresolved": ["the rollout date"]})
    body = research(research_client, max_iterations=1)
    assert body["partial"] is True and body["iterations"] == 1
    assert body["sufficiency"] == {"status": "INSUFFICIENT", "reason": "reason INSUFFICIENT",
                                   "missing": ["cache headers rollout date"]}
    assert body["cited_memory_ids"] == []


def test_default_budget_is_two_rounds(research_client: TestClient, llm_server: ScriptedLLMServer) -> None:
    caching_memories(research_client)
    llm_server.script(judged("INSUFFICIENT", "first gap"), judged("INSUFFICIENT", "second gap"),
                      {"answer": "Partly known.", "key_findings": [], "unresolved": []})
    body = research(research_client)
    assert body["iterations"] == 2 and body["partial"] is True
    assert [trace["query"] for trace in body["query_trace"]] == [TOPIC, "first gap"]


def test_disabled_is_503_whatever_the_body(disabled_client: TestClient, llm_server: ScriptedLLMServer) -> None:
    for body in ({"topic": TOPIC}, {"max_iterations": 9}):
        response = disabled_client.post("/research", json=body)
        assert response.status_code == 503
        assert response.json() == {"error": "research_disabled", "message": "POST /research is disabled. Set "
                                   "RESEARCH_ENABLED=true to enable agentic multi-hop retrieval."}  # upstream's
    assert llm_server.requests == []


def test_research_enabled_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESEARCH_ENABLED", "true")
    assert Settings().research_enabled is True
    monkeypatch.delenv("RESEARCH_ENABLED")
    monkeypatch.setenv("ZENGRAM_RESEARCH_ENABLED", "true")
    assert Settings().research_enabled is True
    monkeypatch.delenv("ZENGRAM_RESEARCH_ENABLED")
    assert Settings().research_enabled is False


@pytest.mark.parametrize(("body", "field"), [
    ({}, "topic"),
    ({"topic": "   "}, "topic"),
    ({"topic": "x" * 1001}, "topic"),
    ({"topic": TOPIC, "max_iterations": 0}, "max_iterations"),
    ({"topic": TOPIC, "max_iterations": 5}, "max_iterations"),
    ({"topic": TOPIC, "max_iterations": "two"}, "max_iterations"),
    ({"topic": TOPIC, "client_id": "acme corp"}, "client_id"),
    ({"topic": 42}, "topic"),
])
def test_invalid_bodies_are_400_naming_the_field(
    research_client: TestClient, llm_server: ScriptedLLMServer, body: dict[str, Any], field: str
) -> None:
    assert_error(research_client.post("/research", json=body), 400, field)
    assert llm_server.requests == []


def test_invalid_llm_json_is_502(research_client: TestClient, llm_server: ScriptedLLMServer) -> None:
    caching_memories(research_client)
    llm_server.script("this is not json", '{"status": "MAYBE"}')  # the model gets one second chance
    assert_error(research_client.post("/research", json={"topic": TOPIC}), 502)


def test_unreachable_llm_is_503(research_client: TestClient, llm_server: ScriptedLLMServer) -> None:
    from tests.llm_server import HttpFailure

    llm_server.script(HttpFailure(503))
    assert_error(research_client.post("/research", json={"topic": TOPIC}), 503)


def test_needs_the_api_key(research_client: TestClient) -> None:
    assert_error(research_client.post("/research", json={"topic": TOPIC}, headers={"x-api-key": "wrong"}), 401)
