"""Query expansion for vague queries (zengram.memory.domain.expansion)."""

from __future__ import annotations

import pytest
from zengram.memory.domain.expansion import TOPICS, analyze_query


@pytest.mark.parametrize(("query", "domain"), [
    ("Can you recommend a good show to watch?", "entertainment"),
    ("Any suggestions for a book I'd enjoy?", "reading"),
    ("What's the best restaurant for dinner near the office?", "food"),
    ("I'm looking for a board game for the team offsite", "hobby"),
    ("Should I try a new workout at the gym?", "fitness"),
])
def test_a_vague_query_naming_a_topic_gets_its_terms(query: str, domain: str) -> None:
    analysis = analyze_query(query)
    assert (analysis.is_vague, analysis.domain) == (True, domain)
    assert analysis.expansion == TOPICS[domain][1]
    assert analysis.expand(query) == f"{query} {TOPICS[domain][1]}"


def test_a_specific_query_keeps_its_text_but_names_its_topic() -> None:
    analysis = analyze_query("Which movie did Acme's team watch on Friday?")
    assert (analysis.is_vague, analysis.domain, analysis.expansion) == (False, "entertainment", None)
    query = "Which movie did Acme's team watch on Friday?"
    assert analysis.expand(query) == query


def test_a_vague_query_without_a_known_topic_is_not_expanded() -> None:
    analysis = analyze_query("Any advice on the quarterly roadmap?")
    assert (analysis.is_vague, analysis.domain, analysis.expand("q")) == (True, None, "q")


def test_the_topic_named_most_wins_and_phrases_count_double() -> None:
    assert analyze_query("recommend a song or album or a movie").domain == "music"
    assert analyze_query("suggest a board game or a book").domain == "hobby"  # "board game" + "game" vs "book"


def test_no_topic_and_no_preference_is_plain() -> None:
    analysis = analyze_query("Which database does billing use?")
    assert (analysis.is_vague, analysis.domain, analysis.expansion) == (False, None, None)
