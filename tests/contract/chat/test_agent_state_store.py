"""The `AgentStateStore` contract (zengram/chat/ports.py), for every adapter."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from zengram.chat.domain.state import AgentState

from tests.contract.chat.conftest import ChatStores
from tests.contract.chat.helpers import at


def state(key: str, value: Any, *, subject: str = "alice", created: datetime | None = None,
          expires: datetime | None = None) -> AgentState:
    moment = created or at(0)
    return AgentState(project_id="acme", subject_id=subject, key=key, value=value, created_at=moment,
                      updated_at=moment, expires_at=expires)


def test_a_value_reads_back_until_it_expires(stores: ChatStores) -> None:
    task = {"step": 3, "done": ["research"], "nested": {"ok": True, "n": 1.5}}
    stores.state.put(state("task", task, expires=at(60)))
    found = stores.state.get("acme", "alice", "task", at(59))
    assert found is not None and found.value == task and found.expires_at == at(60)
    assert stores.state.get("acme", "alice", "task", at(60)) is None
    assert stores.state.get("acme", "bob", "task", at(0)) is None


def test_replacing_keeps_the_first_creation(stores: ChatStores) -> None:
    stores.state.put(state("mode", "draft"))
    replaced = stores.state.put(state("mode", "final", created=at(10)))
    assert replaced.created_at == at(0) and replaced.value == "final"
    found = stores.state.get("acme", "alice", "mode", at(11))
    assert found is not None and found.value == "final" and found.expires_at is None


def test_live_keys_are_listed_in_order(stores: ChatStores) -> None:
    stores.state.put(state("b", 2))
    stores.state.put(state("a", [1, None]))
    stores.state.put(state("c", 3, expires=at(5)))
    stores.state.put(state("z", 0, subject="bob"))
    assert [(s.key, s.value) for s in stores.state.list_live("acme", "alice", at(1))] == [
        ("a", [1, None]), ("b", 2), ("c", 3)]
    assert [s.key for s in stores.state.list_live("acme", "alice", at(5))] == ["a", "b"]


def test_delete_says_whether_a_live_key_was_there(stores: ChatStores) -> None:
    stores.state.put(state("x", 1))
    stores.state.put(state("old", 1, expires=at(1)))
    assert stores.state.delete("acme", "alice", "x", at(2)) is True
    assert stores.state.delete("acme", "alice", "x", at(2)) is False
    assert stores.state.delete("acme", "alice", "old", at(2)) is False
    assert stores.state.get("acme", "alice", "x", at(2)) is None
