"""LoCoMo conversations as turns to store and questions to ask (see /work/shared/data/locomo/README.md)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

DEFAULT_DATA = Path("/work/shared/data/locomo/locomo-dev5.json")
EVIDENCE_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


@dataclass(frozen=True)
class Turn:
    dia_id: tuple[int, int]
    speaker: str
    content: str
    session_date: datetime


@dataclass(frozen=True)
class Question:
    conversation: str
    text: str
    category: int
    evidence: frozenset[tuple[int, int]]


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]


def parse_session_date(text: str) -> datetime:
    """ "1:56 pm on 8 May, 2023" → an aware UTC datetime."""
    return datetime.strptime(" ".join(text.split()), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def turn_content(turn: dict[str, object]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    caption = turn.get("blip_caption")
    return f"{text} [shares {caption}]" if caption else text


def normalise_evidence(values: list[str]) -> set[tuple[int, int]]:
    found: set[tuple[int, int]] = set()
    for value in values:
        for session, turn in EVIDENCE_ID.findall(str(value)):
            found.add((int(session), int(turn)))
    return found


def _dia_id(value: str) -> tuple[int, int]:
    ids = normalise_evidence([value])
    if len(ids) != 1:
        raise ValueError(f"bad dia_id {value!r}")
    return next(iter(ids))


def load(path: Path = DEFAULT_DATA) -> list[Conversation]:
    conversations = []
    for sample in json.loads(path.read_text()):
        conv = sample["conversation"]
        turns: list[Turn] = []
        sessions = sorted(
            (int(key.split("_")[1]), key) for key in conv
            if re.fullmatch(r"session_\d+", key) and isinstance(conv[key], list) and conv[key]
        )
        for _number, key in sessions:
            date = parse_session_date(conv[f"{key}_date_time"])
            turns += [Turn(_dia_id(t["dia_id"]), t["speaker"], turn_content(t), date) for t in conv[key]]
        known = {turn.dia_id for turn in turns}
        questions = []
        for qa in sample["qa"]:
            evidence = normalise_evidence(qa.get("evidence", [])) & known
            if evidence:
                questions.append(Question(sample["sample_id"], str(qa["question"]), int(qa["category"]),
                                          frozenset(evidence)))
        conversations.append(Conversation(sample["sample_id"], turns, questions))
    return conversations
