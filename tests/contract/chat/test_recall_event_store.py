"""The `RecallEventStore` contract (zengram/chat/ports.py), for every adapter."""

from __future__ import annotations

from zengram.chat.domain.recalls import HistoryUse, LearningOutcome, MemoryUse, RecallEvent
from zengram.chat.domain.tenancy import new_id

from tests.contract.chat.conftest import ChatStores
from tests.contract.chat.helpers import at


def event(chat: str, seconds: float, memories: tuple[str, ...] = (), project: str = "acme") -> RecallEvent:
    return RecallEvent(id=new_id("rcl"), project_id=project, subject_id="alice", chat_id=chat, provider="openai",
                       model="gpt-4o-mini", created_at=at(seconds),
                       history=HistoryUse(message_indexes=[0, 1], tokens=9),
                       memories=[MemoryUse(memory_id=m, text=f"text of {m}", score=0.5, relevance=0.6, tokens=3)
                                 for m in memories])


def test_events_by_chat_by_memory_and_latest(stores: ChatStores) -> None:
    first = event("c1", 0, ("m1", "m2"))
    second = event("c1", 10, ("m2",))
    other_chat = event("c2", 5)
    elsewhere = event("c1", 20, ("m2",), project="globex")
    for each in (first, second, other_chat, elsewhere):
        stores.recalls.record(each)
    assert stores.recalls.for_chat("acme", "c1", 10) == [first, second]
    assert stores.recalls.for_chat("acme", "c1", 1) == [first]
    assert stores.recalls.for_memory("acme", "m2", 10) == [second, first]
    assert stores.recalls.for_memory("acme", "m1", 10) == [first]
    assert stores.recalls.latest("acme", 2) == [second, other_chat]
    assert stores.recalls.get(first.id) == first


def test_learning_outcome_is_replaced(stores: ChatStores) -> None:
    recorded = event("c1", 0)
    stores.recalls.record(recorded)
    stores.recalls.set_learning(recorded.id, LearningOutcome(status="pending", job_id="job_1"))
    done = LearningOutcome(status="done", job_id="job_1", attempts=1, created=["mem_1"])
    stores.recalls.set_learning(recorded.id, done)
    stores.recalls.set_learning("rcl_unknown", done)
    found = stores.recalls.get(recorded.id)
    assert found is not None and found.learning == done
    assert stores.recalls.for_chat("acme", "c1", 10)[0].learning == done
