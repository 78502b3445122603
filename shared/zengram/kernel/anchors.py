"""Cheap scans for the credential detectors (issue 37: scrubbing cost 0.4–4 s per MB, every detector scanning every
text with a regex). Two tools, both exact:

- `literal_hint`: whether a text holds one of some literals, by substring search (C speed), case-insensitively on
  the text lower-cased once per text. Not for a text holding one of the four non-ASCII characters `re.IGNORECASE`
  folds onto ASCII letters (`ſ` matches `s`, `K` matches `k`, `İ`, `ı`; `İ` is also the one character whose
  lower case is two): such a text asks the regex.
- `anchored`: `pattern.finditer(text)` for a pattern whose every match starts with one of some literals: the regex
  is tried only where a literal starts (`match` at a position sees the text before it, so look-behinds and `\\b`
  hold), skipping positions inside the last match, which is what `finditer` finds.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator

# Every character above ASCII that `re.IGNORECASE` matches to an ASCII letter or whose lower case is not one
# character (tests/unit/test_scrub_anchors.py checks the list against the whole of Unicode).
FOLDS_ONTO_ASCII = "\u0130\u0131\u017f\u212a"
_FOLDING = re.compile(f"[{FOLDS_ONTO_ASCII}]")


@functools.lru_cache(maxsize=4)
def lowered(text: str) -> str:
    """`text.lower()`, once per text however many detectors ask."""
    return text.lower()


@functools.lru_cache(maxsize=4)
def folds_like_re(text: str) -> bool:
    """Whether `lowered(text)` finds exactly what `re.IGNORECASE` finds, at the same positions."""
    return text.isascii() or _FOLDING.search(text) is None


def literal_hint(*words: str, ignore_case: bool = False) -> Callable[[str], bool]:
    """Whether a text holds one of `words` (case-insensitively when `ignore_case`, as `re.IGNORECASE` would)."""
    regex = re.compile("|".join(re.escape(word) for word in words), re.IGNORECASE if ignore_case else 0)
    folded = tuple(word.lower() for word in words)

    def hint(text: str) -> bool:
        if not ignore_case:
            return any(word in text for word in words)
        if folds_like_re(text):
            low = lowered(text)
            return any(word in low for word in folded)
        return regex.search(text) is not None

    return hint


def positions(text: str, words: tuple[str, ...], ignore_case: bool) -> list[int]:
    """Every position where one of `words` starts (overlaps included), in order."""
    haystack = lowered(text) if ignore_case else text
    found: set[int] = set()
    for word in words:
        start = haystack.find(word)
        while start >= 0:
            found.add(start)
            start = haystack.find(word, start + 1)
    return sorted(found)


def anchored(pattern: re.Pattern[str], *words: str) -> Callable[[str], Iterator[re.Match[str]]]:
    """`pattern.finditer`, for a pattern each of whose matches starts with one of `words` (case-insensitively when
    the pattern is)."""
    ignore_case = bool(pattern.flags & re.IGNORECASE)
    folded = tuple(word.lower() for word in words) if ignore_case else words

    def finditer(text: str) -> Iterator[re.Match[str]]:
        if ignore_case and not folds_like_re(text):
            yield from pattern.finditer(text)
            return
        done = 0
        for position in positions(text, folded, ignore_case):
            if position < done:
                continue
            match = pattern.match(text, position)
            if match is not None:
                yield match
                done = max(match.end(), position + 1)

    return finditer
