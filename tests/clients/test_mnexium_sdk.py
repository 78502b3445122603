"""The acceptance flow of the chat layer (issue 14), driven by the official `mnexium` SDK (PyPI, unchanged) and the
official `openai` SDK against a live server, its providers on the scripted model server that records every message
list it receives. The same flow runs on the embedded host (SQLite) and on the DynamoDB host (moto).

Where the Mnexium SDK 0.2 has no way to say something the layer supports (a prompt's scope, `mnx.state`), the flow
says it over plain HTTP or through the openai SDK's `extra_body`, as a Mnexium user would.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from mnexium import (
    ChatOptions,
    ChatProcessOptions,
    Mnexium,
    MnxRecordsConfig,
    ProcessOptions,
    ProviderConfig,
    SystemPromptCreateOptions,
)
from zengram.assembly.containers import build_container
from zengram.embedded.app import build_embedded_app
from zengram.embedded.background import BackgroundServer
from zengram.kernel.ports import Embedder
from zengram.settings import Settings

from tests.api.chat.conftest import NO_LEARNING, OPENAI_KEY, ChatClock, chat_settings_for
from tests.llm_server import ScriptedLLMServer
from tests.support import API_KEY

PROJECT_PROMPT = "You are Acme's concierge."
SUBJECT_PROMPT = "Alice prefers short answers."
CHAT_PROMPT = "This chat plans Alice's trip."
PROMPTS = f"{PROJECT_PROMPT}\n\n{SUBJECT_PROMPT}"


@pytest.fixture(params=["sqlite", "dynamodb"])
def host_settings(request: pytest.FixtureRequest, llm_settings: Settings, llm_server: ScriptedLLMServer,
                  monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    """The embedded host, or the DynamoDB host (records, history, state… in one DynamoDB table on moto)."""
    llm_server.default(NO_LEARNING)
    settings = chat_settings_for(llm_settings, llm_server)
    if request.param == "sqlite":
        yield settings
        return
    from tests.aws_support import REGION, dynamodb_endpoint, fresh_dynamodb_store

    for name, value in {"AWS_ENDPOINT_URL_DYNAMODB": dynamodb_endpoint(), "AWS_REGION": REGION,
                        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}.items():
        monkeypatch.setenv(name, value)
    with fresh_dynamodb_store() as table:
        # dynamodb_create_table: the embedded host also starts the document knowledge base, whose table it makes
        yield settings.model_copy(update={"record_store": "dynamodb", "dynamodb_table": table.table_name,
                                          "dynamodb_create_table": True,
                                          "aws_region": REGION})


@pytest.fixture
def server(host_settings: Settings, minilm: Embedder) -> Iterator[BackgroundServer]:
    container = build_container(host_settings, embedder=minilm, clock=ChatClock())
    try:
        with BackgroundServer(build_embedded_app(host_settings, container)) as running:
            yield running
    finally:
        container.close()


@pytest.fixture
def mnx(server: BackgroundServer) -> Iterator[Mnexium]:
    with Mnexium(api_key=API_KEY, base_url=f"{server.url}/api/v1", openai=ProviderConfig(api_key=OPENAI_KEY),
                 max_retries=0) as client:
        yield client


@pytest.fixture
def http(server: BackgroundServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{server.url}/api/v1", headers={"x-mnexium-key": API_KEY}) as client:
        yield client


def wait_for_learning(http: httpx.Client, chat_id: str) -> list[dict[str, Any]]:
    """The chat's learning jobs once all settled (the worker runs them after the reply; the deadline only ends a
    stuck run)."""
    stop = time.monotonic() + 60
    while True:
        jobs: list[dict[str, Any]] = http.get("/chat/learning", params={"chat_id": chat_id}).json()["jobs"]
        if (jobs and all(job["status"] in ("done", "failed") for job in jobs)) or time.monotonic() > stop:
            return jobs
        time.sleep(0.05)


def received(server: ScriptedLLMServer) -> list[dict[str, Any]]:
    """The message list the provider received last."""
    return server.calls_to("openai")[-1].messages


def stored(settings: Settings) -> bytes:
    """Everything the host keeps: the data folder's files, and on DynamoDB every item of the table."""
    kept = b"".join(path.read_bytes() for path in Path(settings.data_dir).rglob("*") if path.is_file())
    if settings.record_store == "dynamodb":
        from tests.aws_support import dynamodb_client

        pages = dynamodb_client().get_paginator("scan").paginate(TableName=settings.dynamodb_table)
        kept += b"".join(json.dumps(page["Items"]).encode() for page in pages)
    return kept


def test_the_mnexium_sdk_drives_the_whole_layer(mnx: Mnexium, http: httpx.Client, llm_server: ScriptedLLMServer,
                                                host_settings: Settings) -> None:
    alice = mnx.subject("alice")
    chat = alice.create_chat(ChatOptions(history=True, learn=False))

    # A prompt resolved by scope: the project's through the SDK, the subject's and the chat's over HTTP.
    project_prompt = mnx.prompts.create(SystemPromptCreateOptions(name="concierge", prompt_text=PROJECT_PROMPT,
                                                                  is_default=True))
    for scope, scope_id, text in [("subject", "alice", SUBJECT_PROMPT), ("chat", chat.id, CHAT_PROMPT)]:
        assert http.post("/prompts", json={"name": scope, "prompt_text": text, "is_default": True, "scope": scope,
                                           "scope_id": scope_id}).status_code == 201
    resolved = mnx.prompts.resolve(subject_id="alice", chat_id=chat.id)
    assert [p["prompt_text"] for p in resolved["prompts"]] == [PROJECT_PROMPT, SUBJECT_PROMPT, CHAT_PROMPT]
    assert mnx.prompts.get(project_prompt["id"])["name"] == "concierge"

    # A chat with history across three turns: each turn replays the ones before it, after the system prompt.
    history: list[dict[str, Any]] = []
    for question, reply in [("I am planning a trip.", "Where to?"), ("Lisbon, in May.", "Lovely in spring."),
                            ("Where am I going?", "To Lisbon.")]:
        llm_server.script(reply, route="openai")
        response = chat.process(question)
        assert (response.content, response.chat_id, response.subject_id) == (reply, chat.id, "alice")
        system = {"role": "system", "content": f"{PROMPTS}\n\n{CHAT_PROMPT}"}
        assert received(llm_server) == [system, *history, {"role": "user", "content": question}]
        history += [{"role": "user", "content": question}, {"role": "assistant", "content": reply}]
    [listed] = alice.chats.list()
    assert (listed.chat_id, listed.message_count) == (chat.id, 6)
    assert [m["message"] for m in alice.chats.read(chat.id)] == [m["content"] for m in history]

    # A learned memory, recalled in a new chat.
    llm_server.script({"memories": [{"text": "User's favorite color is blue", "kind": "preference"}]})
    llm_server.script("Noted.", route="openai")
    learning = alice.create_chat(ChatOptions(learn=True, history=False))
    learning.process("My favorite color is blue.")
    assert [job["status"] for job in wait_for_learning(http, learning.id)] == ["done"]
    recalling = alice.create_chat(ChatOptions(recall=True, learn=False))
    llm_server.script("Blue.", route="openai")
    assert recalling.process("What is my favorite color?").content == "Blue."
    assert received(llm_server) == [
        {"role": "system", "content": f"{PROMPTS}\n\nRelevant memories about the user:\n- User's favorite color is "
                                      "blue"},
        {"role": "user", "content": "What is my favorite color?"}]
    [hit] = alice.memories.search("favorite color")
    assert hit["text"] == "User's favorite color is blue" and hit["source"] == "inferred" and hit["seen_count"] == 1

    # State, set and read through the SDK, loaded into a completion (mnx.state, over the openai SDK).
    alice.state.set("trip", {"city": "Lisbon", "step": 2}, ttl_seconds=3600)
    assert alice.state.get("trip")["value"] == {"city": "Lisbon", "step": 2}
    assert alice.state.get("nothing") is None
    with openai.OpenAI(base_url=str(http.base_url).rstrip("/"), api_key=API_KEY,
                       default_headers={"x-openai-key": OPENAI_KEY}, max_retries=0) as client:
        llm_server.script("Next: book a hotel.", route="openai")
        completion = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "What is next?"}],
            extra_body={"mnx": {"subject_id": "alice", "state": {"load": True, "key": "trip"}, "history": False,
                                "learn": False}})
        assert completion.choices[0].message.content == "Next: book a hotel."
        assert received(llm_server) == [
            {"role": "system", "content": f'{PROMPTS}\n\nAgent state (JSON):\n{{"trip": {{"city": "Lisbon", '
                                          '"step": 2}}'},
            {"role": "user", "content": "What is next?"}]

    # A record schema, an insert, and the record recalled into a completion.
    mnx.records.define_schema("restaurant", {"name": {"type": "string", "required": True},
                                             "cuisine": {"type": "string"}}, display_name="Restaurants")
    record = mnx.records.insert("restaurant", {"name": "Tasca do Chico", "cuisine": "Portuguese food"})
    assert mnx.records.get("restaurant", record["record_id"])["data"]["name"] == "Tasca do Chico"
    assert [r["record_id"] for r in mnx.records.query("restaurant", where={"cuisine": "Portuguese food"})] == [
        record["record_id"]]
    assert mnx.records.search("restaurant", "portuguese restaurant")[0]["record_id"] == record["record_id"]
    assert [s["type_name"] for s in mnx.records.list_schemas()] == ["restaurant"]
    llm_server.script("Try Tasca do Chico.", route="openai")
    mnx.process(ProcessOptions(content="Where can I eat Portuguese food?", subject_id="alice", learn=False,
                               history=False, system_prompt=False,
                               records=MnxRecordsConfig(recall=True, tables=["restaurant"])))
    assert received(llm_server) == [
        {"role": "system", "content": f"Relevant records:\n- restaurant {record['record_id']}: "
                                      '{"cuisine": "Portuguese food", "name": "Tasca do Chico"}'},
        {"role": "user", "content": "Where can I eat Portuguese food?"}]

    # Skip and supersede on memory create, then restore.
    coffee = alice.memories.add("User likes coffee")
    assert coffee["created"] is True
    skipped = alice.memories.add("User enjoys coffee")
    assert (skipped["created"], skipped["skipped"], skipped["reason"]) == (False, True, "duplicate")
    blueberry = alice.memories.add("Favorite fruit is blueberry")
    apple = alice.memories.add("Favorite fruit is apple")
    assert apple["superseded_ids"] == [blueberry["id"]]
    assert [m["id"] for m in alice.memories.superseded()] == [blueberry["id"]]
    assert alice.memories.add("User enjoys coffee", no_supersede=True)["skipped"] is False  # versioning off
    restored = alice.memories.restore(blueberry["id"])
    assert restored["restored"] is True and alice.memories.get(blueberry["id"])["status"] == "active"
    assert alice.memories.superseded() == []
    assert {"Favorite fruit is blueberry", "Favorite fruit is apple"} <= {m["text"] for m in alice.memories.list()}

    # Recalls: which memories went into which chat.
    favorite = hit["id"]
    assert [row["memory_id"] for row in alice.memories.recalls(chat_id=recalling.id)] == [favorite]
    assert [row["chat_id"] for row in alice.memories.recalls(memory_id=favorite)] == [recalling.id]

    # All six steps at once, in the spec's order: prompts, state, memories, records in the system message; then the
    # chat's history; then the caller's message (state is loaded with mnx.state: the openai SDK's extra_body).
    with openai.OpenAI(base_url=str(http.base_url).rstrip("/"), api_key=API_KEY,
                       default_headers={"x-openai-key": OPENAI_KEY}, max_retries=0) as client:
        llm_server.script("Blue plates at Tasca do Chico.", route="openai")
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "Portuguese food and my favorite color?"}],
            extra_body={"mnx": {"subject_id": "alice", "chat_id": chat.id, "history": True, "recall": True,
                                "state": {"load": True, "key": "trip"}, "learn": False,
                                "records": {"recall": True, "tables": ["restaurant"]}}})
    sent = received(llm_server)
    # Relevance is calibrated (docs/chat.md, "Relevance, calibrated"): a food-and-favourites question now recalls
    # every favourite and the food preferences (cosine 0.25-0.45, calibrated 0.44-0.80), at most five.
    [block] = [part for part in sent[0]["content"].split("\n\n") if part.startswith("Relevant memories")]
    memories = block.splitlines()
    assert set(memories[1:]) == {"- User's favorite color is blue", "- Favorite fruit is blueberry",
                                 "- Favorite fruit is apple", "- User likes coffee", "- User enjoys coffee"}
    assert sent == [
        {"role": "system", "content": "\n\n".join([
            PROMPTS, CHAT_PROMPT, 'Agent state (JSON):\n{"trip": {"city": "Lisbon", "step": 2}}',
            "\n".join(memories),
            f"Relevant records:\n- restaurant {record['record_id']}: "
            '{"cuisine": "Portuguese food", "name": "Tasca do Chico"}'])},
        *history,
        {"role": "user", "content": "Portuguese food and my favorite color?"}]
    history += [{"role": "user", "content": "Portuguese food and my favorite color?"},
                {"role": "assistant", "content": "Blue plates at Tasca do Chico."}]

    # Streaming, through both SDKs.
    llm_server.script("Once upon a time in Lisbon.", route="openai")
    stream = chat.process(ChatProcessOptions(content="Tell me a story", stream=True))
    assert "".join(chunk.content for chunk in stream) == "Once upon a time in Lisbon."
    assert (stream.chat_id, stream.subject_id) == (chat.id, "alice")
    assert alice.chats.read(chat.id)[-1]["message"] == "Once upon a time in Lisbon."
    with openai.OpenAI(base_url=str(http.base_url).rstrip("/"), api_key=API_KEY,
                       default_headers={"x-openai-key": OPENAI_KEY}, max_retries=0) as client:
        llm_server.script("Streamed through openai.", route="openai")
        pieces = client.chat.completions.create(
            model="gpt-4o-mini", stream=True, messages=[{"role": "user", "content": "Stream it"}],
            extra_body={"mnx": {"subject_id": "alice", "chat_id": chat.id, "learn": False}})
        assert "".join(part.choices[0].delta.content or "" for part in pieces if part.choices) == \
            "Streamed through openai."

    # The rest of the SDK's memory calls work (integrations: test_mnexium_sdk_integrations.py).
    alice.memories.update(coffee["id"], text="User loves coffee")
    assert alice.memories.get(coffee["id"])["text"] == "User loves coffee"
    alice.memories.delete(coffee["id"])
    alice.chats.delete(learning.id)
    assert learning.id not in {c.chat_id for c in alice.chats.list()}

    # The provider key went to the provider with each call, and is kept nowhere.
    assert llm_server.calls_to("openai")[-1].headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert OPENAI_KEY.encode() not in stored(host_settings)


def test_the_sdk_is_refused_without_a_valid_key(server: BackgroundServer) -> None:
    from mnexium import AuthenticationError

    with (Mnexium(api_key="not-a-key", base_url=f"{server.url}/api/v1", max_retries=0) as stranger,
          pytest.raises(AuthenticationError)):
        stranger.subject("alice").memories.list()


def test_the_data_folder_holds_one_records_file_for_both_layers(host_settings: Settings, server: BackgroundServer,
                                                               mnx: Mnexium) -> None:
    """One house: the chat layer keeps its data in the same records file (or table) as Zengram's memories."""
    mnx.subject("zed").memories.add("Zed collects stamps")
    if host_settings.record_store == "sqlite":
        files = sorted(path.name for path in Path(host_settings.data_dir).iterdir() if path.suffix == ".sqlite3")
        # the memories' files and the document knowledge base's: none of the chat layer's own
        assert files == ["documents-index.sqlite3", "documents.sqlite3", "entities.sqlite3", "index.sqlite3",
                         "records.sqlite3"]
