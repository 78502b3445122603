"""Where the recall benchmark finds LoCoMo (kept outside the repository), and what it says when it cannot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.recall.__main__ import main as recall_main
from bench.recall.data import DATA_ENV, LocomoDataMissing, default_data, load, locomo_file
from tests.support import REPO_ROOT

TINY_SAMPLE = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a dog."},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice!", "blip_caption": "a puppy"},
        ],
        "session_2_date_time": "2:00 pm on 9 May, 2023",  # a date without a session: skipped
    },
    "qa": [
        {"question": "What did Ann adopt?", "answer": "a dog", "evidence": ["D1:1"], "category": 4},
        {"question": "Unanswerable?", "answer": "-", "evidence": ["D9:9"], "category": 1},  # no such turn
    ],
}


def test_the_default_is_beside_the_repository_not_an_absolute_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV, raising=False)
    assert default_data() == REPO_ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev5.json"


def test_the_environment_names_another_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "mine.json"))
    assert default_data() == tmp_path / "mine.json"


def test_a_missing_file_says_how_to_point_at_one(tmp_path: Path) -> None:
    with pytest.raises(LocomoDataMissing) as missing:
        locomo_file(tmp_path / "absent.json")
    assert str(tmp_path / "absent.json") in str(missing.value)
    assert DATA_ENV in str(missing.value) and "--data" in str(missing.value)


def test_the_benchmark_exits_2_with_that_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert recall_main(["--data", str(tmp_path / "absent.json"), "--no-record"]) == 2
    assert "LoCoMo data not found" in capsys.readouterr().err


def test_loads_turns_and_questions_from_the_named_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps([TINY_SAMPLE]), encoding="utf-8")
    monkeypatch.setenv(DATA_ENV, str(data))
    [conversation] = load()
    assert [turn.content for turn in conversation.turns] == ["Ann: I adopted a dog.", "Bo: Nice! [shares a puppy]"]
    assert [(q.text, q.evidence) for q in conversation.questions] == [("What did Ann adopt?", frozenset({(1, 1)}))]
