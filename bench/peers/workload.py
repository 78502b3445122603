"""The one workload every system runs, as plain JSON, and the answers that come back from another process.

The peer (mem0) runs in its own virtualenv, so it receives each conversation's turns and questions as data
rather than parsing LoCoMo itself: every system stores the same texts in the same order and is asked the
same questions. Standard library and numpy only: this module is imported in both virtualenvs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from bench.recall.data import Conversation
from bench.recall.metrics import POOLED

DiaId = tuple[int, int]


@dataclass(frozen=True)
class Answer:
    """What one question got back: each hit's dia_ids, best first, and the wall time of the search."""

    ranked: list[frozenset[DiaId]]
    latency_ms: float


def selected(conversations: list[Conversation], names: list[str]) -> list[Conversation]:
    """The named conversations (all when none are named), each with only its category 1-4 questions."""
    known = {c.sample_id for c in conversations}
    unknown = sorted(set(names) - known)
    if unknown:
        raise ValueError(f"unknown conversation(s) {', '.join(unknown)}; the data has {', '.join(sorted(known))}")
    chosen = [c for c in conversations if not names or c.sample_id in names]
    return [replace(c, questions=[q for q in c.questions if q.category in POOLED]) for c in chosen]


def conversation_json(conversation: Conversation) -> dict[str, Any]:
    """Its turns (dia_id, text) and question texts, in the order they are stored and asked."""
    return {
        "id": conversation.sample_id,
        "turns": [{"dia_id": list(turn.dia_id), "content": turn.content} for turn in conversation.turns],
        "questions": [question.text for question in conversation.questions],
    }


def answer_json(ranked: Sequence[Sequence[DiaId]], latency_ms: float) -> dict[str, Any]:
    return {"ranked": [[list(dia_id) for dia_id in ids] for ids in ranked], "latency_ms": latency_ms}


def answers_from_json(raw: Sequence[dict[str, Any]], conversations: Sequence[Conversation]) -> list[Answer]:
    """The peer's answers, checked to be one per question asked, in order."""
    expected = sum(len(conversation.questions) for conversation in conversations)
    if len(raw) != expected:
        raise ValueError(f"the peer answered {len(raw)} questions, {expected} were asked")
    return [
        Answer([frozenset((int(s), int(t)) for s, t in hit) for hit in item["ranked"]], float(item["latency_ms"]))
        for item in raw
    ]
