"""Query expansion for vague queries, as upstream Zengram does it: a preference-style question ("can you
recommend a show?") names a topic in passing, while the memories that answer it name the specifics ("John
Mulaney stand-up specials on Netflix"). When a query asks for a recommendation or suggestion and names a
known topic, the topic's broader terms are appended to the text the vector path embeds. Pure, no I/O.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

# Topic → (words that point at it, the terms appended). One word or a two-word phrase each.
TOPICS: dict[str, tuple[str, str]] = {
    "entertainment": (
        "show|movie|movies|series|film|films|watch|tv|netflix|hulu|streaming|episode|season|comedy|drama|"
        "documentary|anime|sitcom|stand-up|binge",
        "show movie series film watch streaming tv entertainment recommend"),
    "music": (
        "song|songs|music|album|artist|band|playlist|concert|listen|spotify|genre|singer|musician",
        "song music album artist band listen playlist concert"),
    "food": (
        "restaurant|food|eat|dinner|lunch|breakfast|cook|cooking|recipe|cuisine|meal|dish|cafe|snack|bake",
        "restaurant food eat dinner meal recipe cuisine cooking"),
    "reading": (
        "book|books|read|reading|author|novel|story|chapter|library|kindle|audiobook|fiction|nonfiction",
        "book read author novel story fiction recommend"),
    "travel": (
        "travel|trip|vacation|holiday|flight|hotel|destination|visit|explore|tour|country|city|road trip",
        "travel trip vacation destination visit flight hotel"),
    "fitness": (
        "exercise|workout|gym|run|running|yoga|fitness|health|weight|training|sport|sports|hiking|bike|cycling",
        "exercise workout gym fitness health training sport"),
    "tech": (
        "app|apps|software|phone|laptop|computer|gadget|device|tool|tools|setup|library|framework",
        "app software tool device setup technology recommend"),
    "shopping": (
        "buy|purchase|shop|shopping|gift|present|product|brand|price|deal|store",
        "buy purchase shop product brand gift recommend"),
    "hobby": (
        "hobby|hobbies|craft|crafts|paint|painting|draw|drawing|garden|gardening|photography|game|games|gaming|"
        "board game|puzzle|diy",
        "hobby activity interest game craft enjoy"),
}
_PREFERENCE = re.compile(
    r"\b(recommend\w*|suggest\w*|tips?|advice|ideas?\s+for|should\s+i|would\s+you|looking\s+for|interested\s+in|"
    r"what(?:'s)?\s+(?:\w+\s+){0,4}(?:good|best|favou?rite|like)|any\s+good)\b")
_PUNCTUATION = re.compile(r"[?!.,;:'\"()]")


@dataclass(frozen=True)
class QueryAnalysis:
    """`is_vague`: the query asks for a preference or recommendation. `domain`: the topic it names most
    (None when none). `expansion`: the terms to append, only for a vague query with a topic."""

    is_vague: bool
    domain: str | None = None
    expansion: str | None = None

    def expand(self, query: str) -> str:
        """The text the vector path embeds: the query, plus the topic's terms for a vague one."""
        return f"{query} {self.expansion}" if self.expansion else query


@functools.cache
def _trigger_topics() -> dict[str, str]:
    return {trigger: topic for topic, (triggers, _) in TOPICS.items() for trigger in triggers.split("|")}


def analyze_query(query: str) -> QueryAnalysis:
    """Whether `query` is vague and which topic it names (two-word phrases count double, ties: first topic)."""
    words = _PUNCTUATION.sub(" ", query.casefold()).split()
    triggers = _trigger_topics()
    hits: dict[str, int] = {}
    for position, word in enumerate(words):
        if word in triggers:
            hits[triggers[word]] = hits.get(triggers[word], 0) + 1
        phrase = " ".join(words[position:position + 2])
        if position + 1 < len(words) and phrase in triggers:
            hits[triggers[phrase]] = hits.get(triggers[phrase], 0) + 2
    is_vague = _PREFERENCE.search(query.casefold()) is not None
    if not hits:
        return QueryAnalysis(is_vague)
    domain = max(hits, key=lambda topic: (hits[topic], -list(TOPICS).index(topic)))
    return QueryAnalysis(is_vague, domain, TOPICS[domain][1] if is_vague else None)
