"""The unchanged `mnexium` SDK (and the openai SDK's `extra_body.mnx`) through the emulated API Gateway: a chat with
history, prompts, state, records, memories and recall, streaming. Its calls carry `x-mnexium-key`, the header the
MnexiumKey authorizer is cached on. The chat functions' provider is the deployment's default one
(ZENGRAM_CHAT_DEFAULT_BASE_URL: the scripted model server's route "openai"): a caller's own provider key
(x-openai-key) would send the completion to api.openai.com, which nothing here reaches.
tests/clients/test_mnexium_sdk.py runs the whole layer in-process, learning included; this is the same SDK through
the API Gateway emulator into the chat functions' containers.

Streaming: `sam local start-api` runs a function to completion and sends its answer in one piece (as API Gateway
does for a Lambda integration without response streaming), so an SSE answer reaches the SDK whole; the SDK parses
it as the same chunks. The tests check the chunks and their order, not their timing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from mnexium import (
    APIError,
    AuthenticationError,
    ChatOptions,
    ChatProcessOptions,
    Mnexium,
    MnxRecordsConfig,
    ProcessOptions,
)

from tests.e2e.helpers import eventually, unique
from tests.llm_server import ScriptedLLMServer

pytestmark = pytest.mark.xdist_group("e2e")  # one worker, one cloud (conftest.py)


@pytest.fixture
def mnx(api_url: str, api_key: str, llm: ScriptedLLMServer) -> Iterator[Mnexium]:
    with Mnexium(api_key=api_key, base_url=f"{api_url}/api/v1", max_retries=0, timeout=120) as client:
        yield client


@pytest.fixture
def http(api_url: str, api_key: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{api_url}/api/v1", headers={"x-mnexium-key": api_key}, timeout=120) as client:
        yield client


@pytest.fixture
def completions(api_url: str, api_key: str) -> Iterator[openai.OpenAI]:
    # the key in x-mnexium-key too: the header the MnexiumKey authorizer reads
    with openai.OpenAI(base_url=f"{api_url}/api/v1", api_key=api_key, default_headers={"x-mnexium-key": api_key},
                       max_retries=0, timeout=120) as client:
        yield client


def received(llm: ScriptedLLMServer) -> list[dict[str, Any]]:
    """The message list the provider received last."""
    return llm.calls_to("openai")[-1].messages


def test_a_chat_with_prompts_and_history(mnx: Mnexium, http: httpx.Client, llm: ScriptedLLMServer) -> None:
    subject = mnx.subject(unique("alice"))
    chat = subject.create_chat(ChatOptions(history=True, learn=False))
    for scope, scope_id, text in [("subject", subject.id, "Alice prefers short answers."),
                                  ("chat", chat.id, "This chat plans Alice's trip.")]:
        assert http.post("/prompts", json={"name": scope, "prompt_text": text, "is_default": True, "scope": scope,
                                           "scope_id": scope_id}).status_code == 201
    resolved = mnx.prompts.resolve(subject_id=subject.id, chat_id=chat.id)
    assert [p["prompt_text"] for p in resolved["prompts"]][-2:] == ["Alice prefers short answers.",
                                                                    "This chat plans Alice's trip."]

    history: list[dict[str, Any]] = []
    for question, reply in [("I am planning a trip.", "Where to?"), ("Lisbon, in May.", "Lovely in spring."),
                            ("Where am I going?", "To Lisbon.")]:
        llm.script(reply, route="openai")
        response = chat.process(question)
        assert (response.content, response.chat_id, response.subject_id) == (reply, chat.id, subject.id)
        sent = received(llm)
        assert sent[0]["role"] == "system" and sent[0]["content"].endswith(
            "Alice prefers short answers.\n\nThis chat plans Alice's trip.")
        assert sent[1:] == [*history, {"role": "user", "content": question}]
        history += [{"role": "user", "content": question}, {"role": "assistant", "content": reply}]
    [listed] = subject.chats.list()
    assert (listed.chat_id, listed.message_count) == (chat.id, 6)
    assert [m["message"] for m in subject.chats.read(chat.id)] == [m["content"] for m in history]


def test_state_records_memories_and_recall(mnx: Mnexium, completions: openai.OpenAI,
                                           llm: ScriptedLLMServer) -> None:
    subject = mnx.subject(unique("bob"))
    subject.state.set("trip", {"city": "Lisbon", "step": 2}, ttl_seconds=3600)
    assert subject.state.get("trip")["value"] == {"city": "Lisbon", "step": 2}
    assert subject.state.get("nothing") is None
    llm.script("Next: book a hotel.", route="openai")
    completion = completions.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "What is next?"}],
        extra_body={"mnx": {"subject_id": subject.id, "state": {"load": True, "key": "trip"}, "history": False,
                            "learn": False, "system_prompt": False}})
    assert completion.choices[0].message.content == "Next: book a hotel."
    assert received(llm)[0] == {"role": "system", "content": 'Agent state (JSON):\n{"trip": {"city": "Lisbon", '
                                                             '"step": 2}}'}

    table = unique("restaurant").replace("-", "_")
    mnx.records.define_schema(table, {"name": {"type": "string", "required": True}, "cuisine": {"type": "string"}},
                              display_name="Restaurants")
    record = mnx.records.insert(table, {"name": "Tasca do Chico", "cuisine": "Portuguese food"})
    assert mnx.records.get(table, record["record_id"])["data"]["name"] == "Tasca do Chico"
    assert [r["record_id"] for r in mnx.records.query(table, where={"cuisine": "Portuguese food"})] == [
        record["record_id"]]
    hits = eventually(lambda: mnx.records.search(table, "portuguese restaurant"), bool)
    assert hits[0]["record_id"] == record["record_id"]
    assert table in [s["type_name"] for s in mnx.records.list_schemas()]
    llm.script("Try Tasca do Chico.", route="openai")
    mnx.process(ProcessOptions(content="Where can I eat Portuguese food?", subject_id=subject.id, learn=False,
                               history=False, system_prompt=False,
                               records=MnxRecordsConfig(recall=True, tables=[table])))
    assert received(llm)[0] == {"role": "system", "content": f"Relevant records:\n- {table} {record['record_id']}: "
                                                             '{"cuisine": "Portuguese food", "name": "Tasca do Chico"}'}

    color = subject.memories.add("User's favorite color is blue")
    assert color["created"] is True
    skipped = subject.memories.add("User's favorite color is blue")  # the same again
    assert (skipped["created"], skipped["skipped"]) == (False, True)
    blueberry = subject.memories.add("Favorite fruit is blueberry")
    # on the AWS host a supersede candidate is found through the search index, which is near-real-time
    eventually(lambda: subject.memories.search("favorite fruit"),
               lambda hits: blueberry["id"] in [hit["id"] for hit in hits])
    apple = subject.memories.add("Favorite fruit is apple")
    assert apple["superseded_ids"] == [blueberry["id"]]
    assert subject.memories.restore(blueberry["id"])["restored"] is True
    eventually(lambda: subject.memories.search("favorite color"), bool)

    recalling = subject.create_chat(ChatOptions(recall=True, learn=False, history=False))
    llm.script("Blue.", route="openai")
    assert recalling.process(ChatProcessOptions(content="What is my favorite color?",
                                                system_prompt=False)).content == "Blue."
    system = received(llm)[0]["content"]
    assert system.startswith("Relevant memories about the user:\n- User's favorite color is blue")
    recalls = subject.memories.recalls(chat_id=recalling.id)
    assert [row["memory_id"] for row in recalls][:1] == [color["id"]]
    assert subject.claims.get("favorite_color") is None
    claim = subject.claims.set("favorite_color", "blue", confidence=0.9, source="chat")
    assert subject.claims.get("favorite_color")["active_claim_id"] == claim["id"]
    assert subject.claims.retract(claim["id"])["success"] is True
    assert subject.claims.get("favorite_color") is None


def test_streaming_through_both_sdks(mnx: Mnexium, completions: openai.OpenAI, llm: ScriptedLLMServer) -> None:
    subject = mnx.subject(unique("carol"))
    chat = subject.create_chat(ChatOptions(history=True, learn=False))
    llm.script("Once upon a time in Lisbon.", route="openai")
    stream = chat.process(ChatProcessOptions(content="Tell me a story", stream=True, system_prompt=False))
    pieces = [chunk.content for chunk in stream]
    assert len(pieces) > 1 and "".join(pieces) == "Once upon a time in Lisbon."
    assert (stream.chat_id, stream.subject_id) == (chat.id, subject.id)
    assert subject.chats.read(chat.id)[-1]["message"] == "Once upon a time in Lisbon."

    llm.script("Streamed through openai.", route="openai")
    parts = completions.chat.completions.create(
        model="gpt-4o-mini", stream=True, messages=[{"role": "user", "content": "Stream it"}],
        extra_body={"mnx": {"subject_id": subject.id, "chat_id": chat.id, "learn": False}})
    assert "".join(part.choices[0].delta.content or "" for part in parts if part.choices) == \
        "Streamed through openai."


def test_learning_runs_after_the_reply(mnx: Mnexium, http: httpx.Client, llm: ScriptedLLMServer,
                                      local_cloud: dict[str, Any]) -> None:
    """`learn: true` queues a job run after the reply. On AWS the chat function hands it to the learning function
    (an asynchronous invocation of `zg-<stage>-…-chat-learning:live`), and the ChatLearningSchedule sweep runs what
    was not handed over. Under SAM local that name is not served (start-lambda knows logical ids, no aliases): the
    chat function logs "could not be handed over; the sweep will run it", and the job waits for the sweep
    (rate(5 minutes)). The test fires the template's sweep itself, as Scheduler delivers it, instead of waiting."""
    subject = mnx.subject(unique("dave"))
    llm.script({"memories": [{"text": "User's favorite city is Porto", "kind": "preference"}]})
    llm.script("Noted.", route="openai")
    learning = subject.create_chat(ChatOptions(learn=True, history=False))
    learning.process(ChatProcessOptions(content="My favorite city is Porto.", system_prompt=False))
    if local_cloud["target"] == "local-cloud":
        from infra.local_jobs.schedules import fire, read_schedules

        parameters = dict(item.split("=", 1) for item in local_cloud.get("parameter_overrides", []))
        [sweep] = [s for s in read_schedules(parameters=parameters) if s.function == "ChatLearningFunction"]
        assert "FunctionError" not in fire(sweep, local_cloud["lambda_url"], wait=True)

    def jobs() -> list[dict[str, Any]]:
        listed: list[dict[str, Any]] = http.get("/chat/learning", params={"chat_id": learning.id}).json()["jobs"]
        return listed

    settled = eventually(jobs, lambda found: bool(found) and all(j["status"] in ("done", "failed") for j in found),
                         seconds=120, interval=1)
    assert [job["status"] for job in settled] == ["done"], settled
    assert [m["text"] for m in subject.memories.list()] == ["User's favorite city is Porto"]


def test_a_wrong_key_is_refused(api_url: str, at_the_edge: bool) -> None:
    """At the edge the MnexiumKey authorizer refuses it (403, the SDK's APIError); the embedded server's own check
    answers 401 (the SDK's AuthenticationError)."""
    with (Mnexium(api_key="not-a-key", base_url=f"{api_url}/api/v1", max_retries=0) as stranger,
          pytest.raises((AuthenticationError, APIError)) as refused):
        stranger.subject("alice").memories.list()
    if at_the_edge:
        assert isinstance(refused.value, APIError) and refused.value.status == 403
    else:
        assert isinstance(refused.value, AuthenticationError)
