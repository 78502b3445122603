"""Text analysis shared by every keyword path: word splitting and English stop words."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)

STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being below between both
    but by can could did do does doing down during each few for from further had has have having he her here hers
    herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on
    once only or other our ours ourselves out over own same she should so some such than that the their theirs
    them themselves then there these they this those through to too under until up very was we were what when
    where which while who whom why will with would you your yours yourself yourselves
    """.split()
)
# What `\w+` leaves of possessives and contractions ("Caroline's", "didn't", "I'm"): noise for BM25.
CLITICS = frozenset("s t d ll m re ve".split())


def words(text: str) -> list[str]:
    """Lower-cased words (letters, digits, underscore), in order."""
    return [word.lower() for word in _WORD.findall(text)]


def search_terms(text: str, limit: int = 64) -> list[str]:
    """Distinct non-stop words of a query, in order; all words when the query is only stop words."""
    all_words = list(dict.fromkeys(words(text)))
    meaningful = [word for word in all_words if word not in STOP_WORDS and word not in CLITICS]
    return (meaningful or all_words)[:limit]
