"""The chat model adapter, driving the real openai SDK against the scripted chat server on the loopback."""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path

import pytest
from pydantic import BaseModel, SecretStr
from zengram.adapters.factories import build_language_model
from zengram.adapters.openai.chat import NO_KEY_PLACEHOLDER, OpenAIChatModel
from zengram.adapters.system.language_model import NoLanguageModel
from zengram.kernel.errors import LLMInvalidResponse, LLMUnavailable
from zengram.kernel.ports import LanguageModel
from zengram.settings import Settings
from zengram.web.errors import status_of

from tests.llm_server import TEST_LLM_KEY, TEST_LLM_MODEL, Delayed, HttpFailure, ScriptedLLMServer

GOOD_ANSWER = {"summary": "Deploys fail on Fridays", "tags": ["deploy"]}


class Verdict(BaseModel):
    summary: str
    tags: list[str]


def chat_model(base_url: str, api_key: str | None = TEST_LLM_KEY) -> OpenAIChatModel:
    return OpenAIChatModel(base_url=base_url, api_key=api_key, model=TEST_LLM_MODEL, timeout=5.0, max_retries=0)


def unused_local_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def unconfigured(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path, llm_base_url=None, llm_api_key=None, llm_api_key_secret_id=None)


def test_keeps_the_language_model_port(llm_server: ScriptedLLMServer) -> None:
    model = chat_model(llm_server.base_url)
    assert isinstance(model, LanguageModel)
    assert (model.provider, model.model) == ("openai-compatible", TEST_LLM_MODEL)


def test_without_a_base_url_the_provider_is_openai() -> None:
    model = OpenAIChatModel(base_url=None, api_key="sk-x", model="gpt-4o-mini")
    assert (model.provider, model.model) == ("openai", "gpt-4o-mini")
    assert OpenAIChatModel(base_url="https://api.openai.com/v1", api_key="sk-x", model="m").provider == "openai"


def test_sends_model_messages_and_json_mode(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(GOOD_ANSWER)
    answer = chat_model(llm_server.base_url).complete_json("You judge deploys.", "What went wrong?", Verdict)

    assert answer == Verdict(**GOOD_ANSWER)
    [body] = llm_server.requests
    assert body["model"] == TEST_LLM_MODEL
    assert body["response_format"] == {"type": "json_object"}
    system, user = body["messages"]
    assert system["role"] == "system" and system["content"].startswith("You judge deploys.")
    assert json.dumps(Verdict.model_json_schema()) in system["content"]
    assert user == {"role": "user", "content": "What went wrong?"}
    assert llm_server.authorizations == [f"Bearer {TEST_LLM_KEY}"]


def test_without_a_key_a_placeholder_is_sent(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(GOOD_ANSWER)
    chat_model(llm_server.base_url, api_key=None).complete_json("s", "u", Verdict)
    assert llm_server.authorizations == [f"Bearer {NO_KEY_PLACEHOLDER}"]


def test_invalid_json_is_asked_for_once_more_saying_what_was_wrong(llm_server: ScriptedLLMServer) -> None:
    llm_server.script("Sure! Here is the summary you asked for.", GOOD_ANSWER)
    answer = chat_model(llm_server.base_url).complete_json("s", "u", Verdict)

    assert answer.summary == GOOD_ANSWER["summary"]
    first, second = llm_server.requests
    assert second["messages"][:2] == first["messages"]
    assert second["messages"][2] == {"role": "assistant", "content": "Sure! Here is the summary you asked for."}
    assert "invalid" in second["messages"][3]["content"].lower()


def test_json_that_misses_the_schema_is_retried_naming_the_field(llm_server: ScriptedLLMServer) -> None:
    llm_server.script({"summary": "only half"}, GOOD_ANSWER)
    chat_model(llm_server.base_url).complete_json("s", "u", Verdict)
    correction = llm_server.requests[1]["messages"][-1]["content"]
    assert "tags" in correction and "Field required" in correction


def test_two_bad_answers_are_a_502(llm_server: ScriptedLLMServer) -> None:
    llm_server.script("not json", {"summary": 3})
    with pytest.raises(LLMInvalidResponse, match="summary") as raised:
        chat_model(llm_server.base_url).complete_json("s", "u", Verdict)
    assert status_of(raised.value) == 502
    assert len(llm_server.requests) == 2


def test_json_in_a_code_fence_is_accepted(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(f"```json\n{json.dumps(GOOD_ANSWER)}\n```")
    assert chat_model(llm_server.base_url).complete_json("s", "u", Verdict).tags == ["deploy"]
    assert len(llm_server.requests) == 1


def test_an_unreachable_server_is_a_503() -> None:
    with pytest.raises(LLMUnavailable, match="could not be reached") as raised:
        chat_model(unused_local_url()).complete_json("s", "u", Verdict)
    assert status_of(raised.value) == 503
    assert TEST_LLM_KEY not in str(raised.value)


def test_a_refused_key_is_a_503_that_never_quotes_the_key(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(HttpFailure(401, f"Incorrect API key provided: {TEST_LLM_KEY}"))
    with pytest.raises(LLMUnavailable, match="refused the API key") as raised:
        chat_model(llm_server.base_url).complete_json("s", "u", Verdict)
    assert TEST_LLM_KEY not in str(raised.value)


def test_a_server_error_is_a_503(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(HttpFailure(503, "model is loading"))
    with pytest.raises(LLMUnavailable, match="answered 503: model is loading"):
        chat_model(llm_server.base_url).complete_json("s", "u", Verdict)


def test_a_rejected_request_is_a_502_with_the_key_redacted(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(HttpFailure(400, f"context too long for key {TEST_LLM_KEY}"))
    with pytest.raises(LLMInvalidResponse, match=r"rejected the request \(400\)") as raised:
        chat_model(llm_server.base_url).complete_json("s", "u", Verdict)
    assert TEST_LLM_KEY not in str(raised.value) and "[REDACTED]" in str(raised.value)


def test_the_configured_timeout_bounds_a_request_and_is_a_503(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    # Given a provider that answers only after 2 s, and a model wired from settings with a 0.2 s timeout
    settings = unconfigured(tmp_path).model_copy(update={
        "llm_base_url": llm_server.base_url, "llm_timeout": 0.2, "llm_max_retries": 0})
    llm_server.script(Delayed(GOOD_ANSWER, 2.0))
    # Then the request is abandoned as timed out: a 503, asked once
    with pytest.raises(LLMUnavailable, match="timed out") as raised:
        build_language_model(settings).complete_json("s", "u", Verdict)
    assert status_of(raised.value) == 503
    assert len(llm_server.requests) == 1


def test_the_key_never_reaches_the_logs(llm_server: ScriptedLLMServer, caplog: pytest.LogCaptureFixture) -> None:
    # Every path that logs: a good answer, a rejected answer asked again, and provider errors quoting the key
    llm_server.script(GOOD_ANSWER, "not json", GOOD_ANSWER,
                      HttpFailure(401, f"Incorrect API key provided: {TEST_LLM_KEY}"),
                      HttpFailure(400, f"bad request for key {TEST_LLM_KEY}"),
                      HttpFailure(500, f"upstream failed for key {TEST_LLM_KEY}"))
    model = chat_model(llm_server.base_url)
    with caplog.at_level(logging.DEBUG):  # the SDK's and httpx's debug logs included
        model.complete_json("s", "u", Verdict)
        model.complete_json("s", "u", Verdict)
        for _ in range(3):
            with pytest.raises((LLMUnavailable, LLMInvalidResponse)) as raised:
                model.complete_json("s", "u", Verdict)
            assert TEST_LLM_KEY not in str(raised.value)
    assert llm_server.pending == 0
    assert any(record.name.startswith("openai") for record in caplog.records)  # the SDK's own logs were captured
    assert any("rejected, asking once more" in record.getMessage() for record in caplog.records)
    assert TEST_LLM_KEY not in caplog.text
    assert all(TEST_LLM_KEY not in repr(record.args) for record in caplog.records)


def test_unconfigured_is_a_503_llm_provider_unavailable(tmp_path: Path) -> None:
    model = build_language_model(unconfigured(tmp_path))
    assert isinstance(model, NoLanguageModel) and isinstance(model, LanguageModel)
    with pytest.raises(LLMUnavailable) as raised:
        model.complete_json("s", "u", Verdict)
    assert (status_of(raised.value), str(raised.value)) == (503, "LLM provider unavailable")


def test_a_base_url_alone_configures_a_keyless_compatible_model(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    settings = unconfigured(tmp_path).model_copy(update={"llm_base_url": llm_server.base_url, "llm_model": "llama3.1"})
    model = build_language_model(settings)
    assert (model.provider, model.model) == ("openai-compatible", "llama3.1")
    llm_server.script(GOOD_ANSWER)
    model.complete_json("s", "u", Verdict)
    assert llm_server.authorizations == [f"Bearer {NO_KEY_PLACEHOLDER}"]
    assert llm_server.requests[0]["model"] == "llama3.1"


def test_a_key_alone_configures_openai(tmp_path: Path) -> None:
    settings = unconfigured(tmp_path).model_copy(update={"llm_api_key": SecretStr("sk-real")})
    model = build_language_model(settings)
    assert (model.provider, model.model) == ("openai", "gpt-4o-mini")


@pytest.mark.parametrize(("variable", "field", "value"), [
    ("ZENGRAM_LLM_BASE_URL", "llm_base_url", "http://localhost:11434/v1"),
    ("LLM_BASE_URL", "llm_base_url", "http://localhost:11434/v1"),
    ("ZENGRAM_LLM_MODEL", "llm_model", "llama3.1"),
])
def test_settings_read_the_llm_variables(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, variable: str, field: str, value: str
) -> None:
    for name in ("ZENGRAM_LLM_BASE_URL", "LLM_BASE_URL", "ZENGRAM_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, value)
    assert getattr(Settings(data_dir=tmp_path), field) == value


@pytest.mark.parametrize("variable", ["ZENGRAM_LLM_API_KEY", "LLM_API_KEY", "OPENAI_API_KEY"])
def test_settings_read_the_llm_key_from_any_of_its_variables(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, variable: str
) -> None:
    for name in ("ZENGRAM_LLM_API_KEY", "LLM_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, "sk-from-env")
    key = Settings(data_dir=tmp_path).llm_api_key
    assert key is not None and key.get_secret_value() == "sk-from-env"


def test_a_blank_key_or_url_means_unset(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ZENGRAM_LLM_API_KEY", " ")
    monkeypatch.setenv("ZENGRAM_LLM_BASE_URL", "")
    settings = Settings(data_dir=tmp_path)
    assert (settings.llm_api_key, settings.llm_base_url) == (None, None)


def test_importing_the_adapter_does_not_import_the_sdk() -> None:
    import subprocess
    import sys

    probe = "import sys, zengram.adapters.openai.chat; print('openai' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
