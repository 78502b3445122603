"""Query-side ranking hints: who a question is about, and whether it asks when. Pure functions, no I/O.

Conversation turns are stored as "Speaker: text". A question that names a speaker ("What did Caroline
research?") is usually answered by that speaker's own turns, and a question that asks when something
happened is usually answered by a turn that says when ("yesterday", "last Friday", "in May 2022").
Neither hint filters anything out: matching candidates get a multiplier on top of `effective_score`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

from zengram.kernel.text import words
from zengram.memory.domain.models import Memory

# "Caroline: ...", "Dr. Jane Smith: ..." — up to three capitalised words, then a colon and a space.
_SPEAKER_PREFIX = re.compile(r"^\s*([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}):\s")
_ASKS_WHEN = re.compile(
    r"^\s*(when|since when|how long|what (year|month|date|day|time)|which (year|month|date|day))\b"
    r"|\b(how long ago|what year|which year|what month|which month|what date)\b",
    re.IGNORECASE,
)
_WEEKDAYS = frozenset(f"{day}day" for day in ("mon", "tues", "wednes", "thurs", "fri", "satur", "sun"))
_MONTHS = frozenset("january february april june july august september october november december".split())
_TIME_WORDS = frozenset({"yesterday", "today", "tonight", "tomorrow", "ago", "weekend"}) | _WEEKDAYS | _MONTHS | {
    f"{day}s" for day in _WEEKDAYS}
_RELATIVE = frozenset({"last", "next", "this", "past"})
_PERIODS = frozenset("week weekend month year night morning summer spring fall autumn winter fri".split()) | _WEEKDAYS
_SPANS = frozenset({"days", "weeks", "months", "years"})
# "May" and "March" are also verbs: only a capitalised one after a word ("in May", "on 3 March") is a month.
_AMBIGUOUS_MONTHS = re.compile(r"(?<=\w )(May|March)\b")


@dataclass(frozen=True)
class QueryBoosts:
    """Multipliers for candidates that fit the question; 1.0 turns a hint off."""

    speaker: float = 1.0
    time: float = 1.0


@functools.lru_cache(maxsize=16_384)  # the same memories come back as candidates query after query
def speaker_of(content: str) -> str | None:
    """The lower-cased speaker of a "Speaker: text" memory, else None."""
    match = _SPEAKER_PREFIX.match(content)
    return match.group(1).lower() if match else None


def names_speaker(query_words: set[str], speaker: str) -> bool:
    """The question names this speaker: by full name, or by first name (titles like "Dr." skipped)."""
    parts = words(" ".join(part for part in speaker.split() if not part.endswith(".")))
    return bool(parts) and (parts[0] in query_words or set(parts) <= query_words)


def asks_when(query: str) -> bool:
    return _ASKS_WHEN.search(query) is not None


@functools.lru_cache(maxsize=16_384)
def mentions_time(text: str) -> bool:
    """The text says when: a relative day/week/month, a weekday, a month or a year.

    Word sets, not one big regex: this runs on every candidate of a "when" question, inside the search budget."""
    tokens = words(text)
    for position, token in enumerate(tokens):
        if token in _TIME_WORDS or (len(token) == 4 and token.isdigit() and token[:2] in ("19", "20")):
            return True
        following = tokens[position + 1] if position + 1 < len(tokens) else ""
        if (token in _RELATIVE and following in _PERIODS) or (token == "few" and following in _SPANS):
            return True
    return ("May" in text or "March" in text) and _AMBIGUOUS_MONTHS.search(text) is not None


def candidate_boosts(query: str, memories: Mapping[str, Memory], boosts: QueryBoosts) -> dict[str, float]:
    """Each memory's multiplier for this query (only those above 1.0 are listed)."""
    query_words = set(words(query))
    when = boosts.time != 1.0 and asks_when(query)
    found: dict[str, float] = {}
    for memory_id, memory in memories.items():
        factor = 1.0
        if boosts.speaker != 1.0:
            speaker = speaker_of(memory.content)
            if speaker is not None and names_speaker(query_words, speaker):
                factor *= boosts.speaker
        if when and mentions_time(memory.content):
            factor *= boosts.time
        if factor != 1.0:
            found[memory_id] = factor
    return found


# Words that carry no topic: the zero-result retry searches again without them (as upstream's extractSearchTerms).
_FILLER = frozenset("""
a an the and or but if of to in on at by for with about from into over under is are was were be been being am do does
did doing have has had having what which who whom whose when where why how that this these those there here it its
i me my we our you your he him his she her they them their can could would should will shall may might must not no
any some all please tell show find get give know anything something everything did ever just also very really
""".split())
_TERM = re.compile(r"[\w][\w.+#-]*")


def key_terms(query: str) -> str:
    """The query's topic words (fillers and one-letter words dropped, order kept, each once): the broader query of
    a search that found nothing. Empty when nothing but fillers is left."""
    seen: dict[str, None] = {}
    for word in _TERM.findall(query):
        cleaned = word.strip(".-")
        if len(cleaned) > 1 and cleaned.casefold() not in _FILLER:
            seen.setdefault(cleaned, None)
    return " ".join(seen)
