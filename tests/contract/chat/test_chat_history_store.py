"""The `ChatHistoryStore` contract (zengram/chat/ports.py), for every adapter."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from zengram.chat.domain.history import NewMessage, Role

from tests.contract.chat.conftest import ChatStores
from tests.contract.chat.helpers import at


def said(*texts: str) -> list[NewMessage]:
    return [NewMessage(role=Role.USER if n % 2 == 0 else Role.ASSISTANT, content=text) for n, text in enumerate(texts)]


def test_messages_keep_their_order_and_fields(stores: ChatStores) -> None:
    first = stores.history.append("acme", "alice", "c1", said("hi", "hello"), at(0))
    second = stores.history.append("acme", "alice", "c1", [
        NewMessage(role=Role.TOOL, content="42", tool_call_id="call_1", name="calc", metadata={"k": "v"})], at(5))
    assert [m.index for m in first] == [0, 1] and second[0].index == 2
    read = stores.history.read("acme", "alice", "c1", 100)
    assert read == [*first, *second]
    assert (read[2].tool_call_id, read[2].name, read[2].metadata, read[2].created_at) == ("call_1", "calc",
                                                                                         {"k": "v"}, at(5))
    assert [m.content for m in stores.history.read("acme", "alice", "c1", 2)] == ["hi", "hello"]
    assert [m.content for m in stores.history.recent("acme", "alice", "c1", 2)] == ["hello", "42"]


def test_chats_are_per_subject_and_listed_by_activity(stores: ChatStores) -> None:
    stores.history.append("acme", "alice", "old", said("a", "b", "c"), at(0))
    stores.history.append("acme", "alice", "new", said("d"), at(10))
    stores.history.append("acme", "alice", "old", said("e"), at(20))
    stores.history.append("acme", "bob", "bobs", said("f"), at(30))
    stores.history.append("globex", "alice", "elsewhere", said("g"), at(40))
    chats = stores.history.chats("acme", "alice", 10, 0)
    assert [(c.chat_id, c.message_count, c.created_at, c.last_message_at) for c in chats] == [
        ("old", 4, at(0), at(20)), ("new", 1, at(10), at(10))]
    assert [c.chat_id for c in stores.history.chats("acme", "alice", 1, 1)] == ["new"]
    assert stores.history.read("acme", "bob", "old", 10) == []


def test_concurrent_appends_never_share_an_index(stores: ChatStores) -> None:
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda n: stores.history.append("acme", "alice", "busy", said(f"q{n}", f"a{n}"), at(n)),
                      range(10)))
    read = stores.history.read("acme", "alice", "busy", 100)
    assert len(read) == 20 and len({m.index for m in read}) == 20
    for n in range(10):  # each call's pair stays together, question first
        question = next(m for m in read if m.content == f"q{n}")
        assert any(m.content == f"a{n}" and m.index == question.index + 1 for m in read)
    assert stores.history.chats("acme", "alice", 10, 0)[0].message_count == 20


def test_deleting_a_chat_removes_it(stores: ChatStores) -> None:
    stores.history.append("acme", "alice", "gone", said("x", "y"), at(0))
    stores.history.append("acme", "alice", "kept", said("z"), at(1))
    assert stores.history.delete_chat("acme", "alice", "gone") is True
    assert stores.history.delete_chat("acme", "alice", "gone") is False
    assert stores.history.read("acme", "alice", "gone", 10) == []
    assert [c.chat_id for c in stores.history.chats("acme", "alice", 10, 0)] == ["kept"]
    again = stores.history.append("acme", "alice", "gone", said("new start"), at(2))
    assert stores.history.chats("acme", "alice", 10, 0)[0].message_count == 1 and again[0].content == "new start"
