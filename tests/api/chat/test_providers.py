"""Bring your own key: the provider is chosen by the key headers, the model name or `mnx.provider`; the caller's key
reaches that provider only, for that request only: it is in no store, no log line and no error message."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from zengram.assembly.containers import build_container
from zengram.embedded.app import build_embedded_app
from zengram.settings import Settings

from tests.api.chat.conftest import ANTHROPIC_KEY, GOOGLE_KEY, OPENAI_KEY, complete
from tests.api.helpers import assert_error
from tests.llm_server import HttpFailure, ScriptedLLMServer
from tests.support import API_KEY, HashingEmbedder, TickingClock

ALL_KEYS = {"x-openai-key": OPENAI_KEY, "x-anthropic-key": ANTHROPIC_KEY, "x-google-key": GOOGLE_KEY}


@pytest.mark.parametrize(("model", "headers", "mnx", "route", "key"), [
    ("gpt-4o-mini", {"x-openai-key": OPENAI_KEY}, {}, "openai", OPENAI_KEY),
    ("claude-sonnet-4-20250514", ALL_KEYS, {}, "anthropic", ANTHROPIC_KEY),
    ("gemini-2.0-flash", ALL_KEYS, {}, "google", GOOGLE_KEY),
    ("llama3.1", {"x-google-key": GOOGLE_KEY}, {}, "google", GOOGLE_KEY),  # the only key sent decides
    ("gpt-4o", ALL_KEYS, {"provider": "anthropic"}, "anthropic", ANTHROPIC_KEY),  # explicitly
])
def test_the_provider_and_its_key(api: TestClient, llm_server: ScriptedLLMServer, model: str,
                                  headers: dict[str, str], mnx: dict[str, str], route: str, key: str) -> None:
    llm_server.script("answer", route=route)
    body = complete(api, "hi", key=None, model=model, headers=headers, learn=False, **mnx)
    assert body["choices"][0]["message"]["content"] == "answer"
    call = llm_server.calls_to(route)[-1]
    assert call.headers["authorization"] == f"Bearer {key}"
    assert call.body["model"] == model
    assert api.get("/api/v1/chat/trace", params={"chat_id": body["mnx"]["chat_id"]}).json()["events"][0][
        "provider"] == route


def test_without_a_key_there_is_no_provider_unless_one_is_configured(api: TestClient) -> None:
    refused = complete(api, "hi", key=None, expect=503, learn=False)
    assert "send a provider key" in refused["error"] and "ZENGRAM_CHAT_DEFAULT_BASE_URL" in refused["error"]
    explicit = complete(api, "hi", expect=400, provider="anthropic")
    assert explicit["error"] == "x-anthropic-key: required for provider 'anthropic'"


def test_the_default_provider_answers_keyless_requests(llm_settings: Settings, llm_server: ScriptedLLMServer,
                                                       tmp_path: Path) -> None:
    from tests.api.chat.conftest import chat_settings_for

    settings = chat_settings_for(llm_settings, llm_server, chat_default_base_url=llm_server.url_for("local"),
                                 chat_default_api_key=SecretStr("local-key"), chat_default_model="llama3.1")
    container = build_container(settings, embedder=HashingEmbedder(), clock=TickingClock())
    try:
        with TestClient(build_embedded_app(settings, container), headers={"x-api-key": API_KEY}) as client:
            llm_server.script("hola", route="local")
            body = complete(client, "hi", key=None, model="gpt-4o-mini", learn=False)
            assert body["choices"][0]["message"]["content"] == "hola"
            call = llm_server.calls_to("local")[-1]
            assert call.body["model"] == "llama3.1" and call.headers["authorization"] == "Bearer local-key"
    finally:
        container.close()


def test_a_refused_key_is_a_400_naming_its_header_without_the_key(api: TestClient,
                                                                  llm_server: ScriptedLLMServer) -> None:
    llm_server.script(HttpFailure(401, f"Incorrect API key provided: {OPENAI_KEY}"), route="openai")
    refused = complete(api, "hi", expect=400)
    assert refused["error"].startswith("x-openai-key: refused by openai (401): Incorrect API key provided")
    assert OPENAI_KEY not in refused["error"]
    llm_server.script(HttpFailure(429, "slow down"), route="openai")
    assert complete(api, "hi", expect=429)["error"] == "openai refused the request (429): slow down"


def test_caller_keys_are_never_stored_nor_logged(api: TestClient, llm_server: ScriptedLLMServer,
                                                 chat_settings: Settings, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    llm_server.default("fine", route="openai")
    llm_server.default("fine", route="anthropic")
    llm_server.script({"memories": [{"text": "User plans a trip to Lisbon", "kind": "context"}]})
    complete(api, "I plan a trip to Lisbon", subject_id="kim", chat_id="k1", headers=ALL_KEYS)
    complete(api, "Also Porto", subject_id="kim", chat_id="k1", model="claude-3-haiku", headers=ALL_KEYS,
             records={"learn": "auto"})
    response = api.post("/api/v1/chat/completions", headers=ALL_KEYS, json={
        "model": "gpt-4o-mini", "stream": True, "messages": [{"role": "user", "content": "stream"}],
        "mnx": {"subject_id": "kim", "chat_id": "k1"}})
    assert response.status_code == 200
    llm_server.script(HttpFailure(401, f"bad key {ANTHROPIC_KEY}"), route="anthropic")
    complete(api, "fail", model="claude-3-haiku", headers=ALL_KEYS, expect=400)
    from tests.api.chat.conftest import wait_for_learning

    assert {job["status"] for job in wait_for_learning(api, "k1")} == {"done"}
    secrets = (OPENAI_KEY, ANTHROPIC_KEY, GOOGLE_KEY)
    logged = "\n".join(record.getMessage() + repr(record.args) for record in caplog.records)
    assert not [key for key in secrets if key in logged]
    stored = b"".join(path.read_bytes() for path in chat_settings.data_dir.rglob("*") if path.is_file())
    assert not [key for key in secrets if key.encode() in stored]
    assert api.get("/api/v1/chat/history/read", params={"subject_id": "kim", "chat_id": "k1"}).json()["count"] == 6


def test_an_unreachable_provider_is_a_503(llm_settings: Settings, llm_server: ScriptedLLMServer) -> None:
    from tests.api.chat.conftest import chat_settings_for

    settings = chat_settings_for(llm_settings, llm_server, chat_openai_base_url="http://127.0.0.1:9/v1")
    container = build_container(settings, embedder=HashingEmbedder(), clock=TickingClock())
    try:
        with TestClient(build_embedded_app(settings, container), headers={"x-api-key": API_KEY}) as client:
            assert "openai unreachable" in assert_error(client.post(
                "/api/v1/chat/completions", headers={"x-openai-key": OPENAI_KEY},
                json={"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}), 503)
    finally:
        container.close()
