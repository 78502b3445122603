"""LoCoMo conversations as turns to store and questions to ask.

The conversations (CC BY-NC 4.0: evaluation data, never in this repository) live in the project's shared folder
beside the repository, `../shared/data/locomo/` (its README describes the shape); `ZENGRAM_LOCOMO` or
`--data` names another file.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

DATA_ENV = "ZENGRAM_LOCOMO"
REPOSITORY = Path(__file__).resolve().parents[2]
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


class LocomoDataMissing(FileNotFoundError):
    """The LoCoMo file is not where it was looked for; the message says how to point at it."""


def default_data() -> Path:
    """`$ZENGRAM_LOCOMO`, else `<repository>/../shared/data/locomo/locomo-dev5.json`, resolved when called."""
    configured = os.environ.get(DATA_ENV, "").strip()
    if configured:
        return Path(configured).expanduser()
    return REPOSITORY.parent / "shared" / "data" / "locomo" / "locomo-dev5.json"


def locomo_file(path: Path | None = None) -> Path:
    """The given file, else `default_data()`; a missing file raises with what to do about it."""
    path = path or default_data()
    if not path.is_file():
        raise LocomoDataMissing(
            f"LoCoMo data not found at {path}: put the project's shared folder beside the repository "
            f"(../shared/data/locomo/locomo-dev5.json), or set {DATA_ENV}=<file>, or pass --data <file>"
        )
    return path


def load(path: Path | None = None) -> list[Conversation]:
    conversations = []
    for sample in json.loads(locomo_file(path).read_text()):
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
