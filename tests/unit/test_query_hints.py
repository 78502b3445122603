"""Query-side ranking hints: a named speaker's turns and, for "when" questions, turns that say when."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from zengram.assembly.containers import Container, build_container
from zengram.kernel.fusion import fuse
from zengram.memory.domain.models import Importance, MemoryType
from zengram.memory.domain.query import (
    QueryBoosts,
    asks_when,
    candidate_boosts,
    mentions_time,
    names_speaker,
    speaker_of,
)
from zengram.memory.domain.requests import MemoryDraft, SearchRequest
from zengram.memory.domain.scoring import ScoringConfig, score_candidates
from zengram.settings import Settings

from tests.contract.test_record_store import make_memory
from tests.support import HashingEmbedder, TickingClock

NOW = datetime(2026, 3, 31, tzinfo=UTC)


@pytest.mark.parametrize(("content", "speaker"), [
    ("Caroline: I went to a support group yesterday.", "caroline"),
    ("Dr. Jane Smith: take two", "dr. jane smith"),
    ("no speaker here: lower-case prefix", None),
    ("Deploy at 10:30: after the freeze", None),
    ("Plain note", None),
])
def test_speaker_is_the_capitalised_prefix_before_a_colon(content: str, speaker: str | None) -> None:
    assert speaker_of(content) == speaker


def test_a_speaker_is_named_by_full_or_first_name_but_not_by_title() -> None:
    assert names_speaker({"what", "did", "caroline", "research"}, "caroline")
    assert names_speaker({"jane", "said"}, "dr. jane smith")
    assert names_speaker({"smith", "jane"}, "dr. jane smith")
    assert not names_speaker({"dr", "smith"}, "dr. jane smith")
    assert not names_speaker({"melanie"}, "caroline")


@pytest.mark.parametrize(("query", "expected"), [
    ("When did Caroline go to the LGBTQ support group?", True),
    ("How long ago was Caroline's 18th birthday?", True),
    ("In what year did Nate win his first tournament?", True),
    ("Which month is Jon's shop opening?", True),
    ("What did Caroline research?", False),
    ("Whenever I deploy, what breaks?", False),
])
def test_when_questions(query: str, expected: bool) -> None:
    assert asks_when(query) is expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I signed up for a pottery class yesterday.", True),
    ("Last Fri I finally took my kids to the workshop.", True),
    ("We moved here 4 years ago", True),
    ("The concert is on Saturday", True),
    ("It was in May 2022", True),
    ("We met on 3 March", True),
    ("Caroline: May I ask you something?", False),
    ("Thanks, that painting is lovely!", False),
])
def test_time_mentions(text: str, expected: bool) -> None:
    assert mentions_time(text) is expected


def test_boosts_multiply_for_each_hint_and_list_only_boosted_memories() -> None:
    memories = {
        "own-dated": make_memory("Caroline: I joined the group last week.", at=NOW),
        "own": make_memory("Caroline: The group is great.", at=NOW),
        "other-dated": make_memory("Melanie: Yesterday we painted.", at=NOW),
        "other": make_memory("Melanie: Nice!", at=NOW),
    }
    boosts = candidate_boosts("When did Caroline join the group?", memories, QueryBoosts(speaker=1.3, time=1.2))
    assert boosts == {"own-dated": pytest.approx(1.56), "own": 1.3, "other-dated": 1.2}
    assert candidate_boosts("What does Caroline like?", memories, QueryBoosts(speaker=1.3, time=1.2)) == {
        "own-dated": 1.3, "own": 1.3}
    assert candidate_boosts("When did Caroline join?", memories, QueryBoosts()) == {}


def test_a_boost_multiplies_effective_score_on_top_of_importance_and_decay() -> None:
    fact = make_memory("Caroline: fact", type=MemoryType.FACT, key="k", importance=Importance.HIGH, at=NOW)
    candidates = fuse({"vector": [(fact.id, 0.2)]})
    config = ScoringConfig()
    [plain] = score_candidates(candidates, {fact.id: fact}, now=NOW, multi_path=False, config=config)
    [boosted] = score_candidates(candidates, {fact.id: fact}, now=NOW, multi_path=False, config=config,
                                 boosts={fact.id: 1.3})
    assert boosted.score == plain.score  # the retrieval score is untouched
    assert boosted.effective_score == pytest.approx(plain.effective_score * 1.3, abs=1e-4)


def _container(tmp_path: Path, **settings: Any) -> Container:
    settings = Settings(data_dir=tmp_path / "data", api_key="k", search_paths="keyword", index_context_turns=0,
                        **settings)
    return build_container(settings, embedder=HashingEmbedder(), clock=TickingClock())


FILLER = ["Nate: the weather is grey", "Joanna: my turtles are asleep", "Nate: the game went to overtime",
          "Joanna: writing a new screenplay"]


def _store(c: Container, content: str, **fields: Any) -> None:
    c.memory.store(MemoryDraft(type=MemoryType.EVENT, content=content, source_agent="chat", client_id="c1",
                               **fields))


def _top(c: Container, query: str) -> str:
    return c.memory.search(SearchRequest(q=query, client_id="c1", limit=5)).hits[0].memory.content


def test_search_prefers_the_named_speakers_turn(tmp_path: Path) -> None:
    on, off = _container(tmp_path / "on"), _container(tmp_path / "off", speaker_boost=1)
    try:
        for c in (on, off):
            for filler in FILLER:
                _store(c, filler)
            _store(c, "Caroline: Melanie, pottery class? a pottery class!")
            _store(c, "Melanie: I took a pottery class")
        question = "Which pottery class did Melanie take?"
        assert _top(off, question) == "Caroline: Melanie, pottery class? a pottery class!"
        assert _top(on, question) == "Melanie: I took a pottery class"
    finally:
        on.close()
        off.close()


def test_when_questions_prefer_turns_that_say_when(tmp_path: Path) -> None:
    on, off = _container(tmp_path / "on"), _container(tmp_path / "off", time_boost=1)
    try:
        for c in (on, off):
            for filler in FILLER:
                _store(c, filler)
            _store(c, "Melanie: the museum trip, oh the museum trip!")
            _store(c, "Melanie: we did the museum trip yesterday")
        assert _top(off, "When did Melanie do the museum trip?") == "Melanie: the museum trip, oh the museum trip!"
        assert _top(on, "When did Melanie do the museum trip?") == "Melanie: we did the museum trip yesterday"
        assert _top(on, "What museum trip did Melanie do?") == "Melanie: the museum trip, oh the museum trip!"
    finally:
        on.close()
        off.close()
