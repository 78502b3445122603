"""`subject.memories.subscribe()` of the official `mnexium` SDK 0.2.2 (unchanged) against the embedded server on
SQLite and on the DynamoDB host (moto), the fixtures of tests/clients/test_mnexium_sdk.py: the stream stays open
and receives, in order, the events of memories another client writes meanwhile, with heartbeats in between, and
nothing of another subject. The deadlines only stop a stuck run; nothing here asserts how fast anything is."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from mnexium import MemoryEvent, Mnexium
from zengram.assembly.containers import build_container
from zengram.embedded.app import build_embedded_app
from zengram.embedded.background import BackgroundServer
from zengram.kernel.ports import Embedder
from zengram.settings import Settings

from tests.api.chat.conftest import ChatClock
from tests.clients.test_mnexium_sdk import host_settings  # noqa: F401  (a fixture: SQLite and DynamoDB on moto)
from tests.support import API_KEY

DEADLINE = 120.0  # seconds before a stuck stream fails the test


@pytest.fixture
def server(host_settings: Settings, minilm: Embedder) -> Iterator[BackgroundServer]:  # noqa: F811
    settings = host_settings.model_copy(update={"chat_events_poll_seconds": 0.02,
                                                "chat_events_heartbeat_seconds": 0.2})
    container = build_container(settings, embedder=minilm, clock=ChatClock())
    try:
        with BackgroundServer(build_embedded_app(settings, container)) as running:
            yield running
    finally:
        container.close()


def client(server: BackgroundServer) -> Mnexium:
    return Mnexium(api_key=API_KEY, base_url=f"{server.url}/api/v1", max_retries=0)


class Subscriber:
    """Iterates one `subscribe()` on a thread until `done(received)` says so, then closes the stream."""

    def __init__(self, sdk: Mnexium, subject: str, done: Callable[[list[MemoryEvent]], bool]) -> None:
        self.received: list[MemoryEvent] = []
        self.connected = threading.Event()
        self._stream = sdk.subject(subject).memories.subscribe()
        self._done = done
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for event in self._stream:
            self.received.append(event)
            if event.type == "connected":
                self.connected.set()
            if self._done(self.received):
                break
        self._stream.close()

    def wait(self) -> list[MemoryEvent]:
        assert self.connected.wait(DEADLINE), "the stream never connected"
        self._thread.join(DEADLINE)
        assert not self._thread.is_alive(), f"the stream stopped short: {[e.type for e in self.received]}"
        return self.received


def memory_events(received: list[MemoryEvent]) -> list[MemoryEvent]:
    return [event for event in received if event.type.startswith("memory.")]


def test_subscribe_receives_another_clients_writes_in_order(server: BackgroundServer) -> None:
    with client(server) as listener, client(server) as writer:
        alice = Subscriber(listener, "alice", lambda got: len(memory_events(got)) == 5)
        bob = Subscriber(listener, "bob", lambda got: any(e.type == "heartbeat" for e in got) and len(got) > 3)
        assert alice.connected.wait(DEADLINE) and bob.connected.wait(DEADLINE)

        blueberry = writer.subject("alice").memories.add("Favorite fruit is blueberry")
        apple = writer.subject("alice").memories.add("Favorite fruit is apple")  # supersedes blueberry
        writer.subject("alice").memories.delete(apple["id"])
        writer.subject("alice").memories.restore(blueberry["id"])

        received = alice.wait()
        assert received[0].type == "connected" and received[0].data["subject_id"] == "alice"
        assert [(e.type, e.data["id"]) for e in memory_events(received)] == [
            ("memory.created", blueberry["id"]), ("memory.created", apple["id"]),
            ("memory.superseded", blueberry["id"]), ("memory.deleted", apple["id"]),
            ("memory.restored", blueberry["id"])]
        assert [e.data["event_id"] for e in memory_events(received)] == [1, 2, 3, 4, 5]
        assert memory_events(received)[0].data["text"] == "Favorite fruit is blueberry"
        assert memory_events(bob.wait()) == []  # bob's stream hears heartbeats, none of alice's events

    # a stream the client closed is audited too, once it has ended
    with httpx.Client(base_url=f"{server.url}/api/v1", headers={"x-mnexium-key": API_KEY}) as http:
        streams = audited_streams(http)
        assert {(row["subject_id"], row["status"]) for row in streams} == {("alice", 200), ("bob", 200)}


def audited_streams(http: httpx.Client) -> list[dict[str, Any]]:
    """The audit rows of the event streams, once both closed streams have been recorded (or the deadline)."""
    stop = time.monotonic() + DEADLINE
    while True:
        rows = [row for row in http.get("/audit/requests").json()["data"]
                if row["route"] == "/api/v1/events/memories"]
        if len(rows) >= 2 or time.monotonic() > stop:
            return rows
        time.sleep(0.05)


def test_a_reconnecting_client_resumes_after_last_event_id(server: BackgroundServer) -> None:
    """What EventSource does on reconnecting (the SDK 0.2.2 does not reconnect): only the events after the last
    one it saw, then the stream stays open for new ones."""
    with client(server) as writer:
        for text in ("Lives in Lisbon", "Works as a baker", "Plays the cello"):
            writer.subject("carol").memories.add(text)
        seen: list[str] = []
        with httpx.Client(base_url=f"{server.url}/api/v1", timeout=DEADLINE) as http, http.stream(
                "GET", "/events/memories", params={"subject_id": "carol"},
                headers={"x-mnexium-key": API_KEY, "Last-Event-ID": "2"}) as response:
            assert response.status_code == 200
            position = ""
            for line in response.iter_lines():
                if line.startswith("id: "):
                    position = line.removeprefix("id: ")
                elif line.startswith("event: memory."):
                    seen.append(position)
                    if seen == ["3"]:
                        writer.subject("carol").memories.add("Owns a bicycle")  # written while the stream is open
                if len(seen) == 2:
                    break
        assert seen == ["3", "4"]


def test_an_open_stream_does_not_keep_the_server_from_stopping(host_settings: Settings,  # noqa: F811
                                                                minilm: Embedder) -> None:
    """uvicorn waits for open responses when it stops, and a stream never ends by itself: the embedded hosts
    (BackgroundServer, `zengram serve`) end what is still open after a grace period."""
    container = build_container(host_settings, embedder=minilm, clock=ChatClock())
    try:
        running = BackgroundServer(build_embedded_app(host_settings, container), shutdown_grace=1)
        with client(running.__enter__()) as listener:
            stream = listener.subject("dave").memories.subscribe()
            assert next(iter(stream)).type == "connected"
            running.__exit__(None, None, None)  # the stream is still open here
            assert running.stopped
            stream.close()
    finally:
        container.close()
