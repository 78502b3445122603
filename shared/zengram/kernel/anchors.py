"""Cheap scans for the credential detectors (issue 37: scrubbing cost 0.4–4 s per MB, every detector scanning every
text with a regex). Every literal a detector asks about (its hint's, its anchors') is found in one pass over the
text, whichever detector asks first (`Literals`, an Aho-Corasick automaton: `ahocorasick_rs`; issue 37 again: ~45
separate searches cost ~90 ms per MB). Two tools on top, both exact:

- `literal_hint`: whether a text holds one of some literals, case-insensitively as `re.IGNORECASE` would. Not for
  a text holding one of the four non-ASCII characters `re.IGNORECASE` folds onto ASCII letters (`ſ` matches `s`,
  `K` matches `k`, `İ`, `ı`; `İ` is also the one character whose lower case is two): such a text asks the regex.
- `anchored`: `pattern.finditer(text)` for a pattern whose every match starts with one of some literals: the regex
  is tried only where a literal starts (`match` at a position sees the text before it, so look-behinds and `\\b`
  hold), skipping positions inside the last match, which is what `finditer` finds.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence

from ahocorasick_rs import BytesAhoCorasick, Implementation

# Every character above ASCII that `re.IGNORECASE` matches to an ASCII letter or whose lower case is not one
# character (tests/unit/test_scrub_anchors.py checks the list against the whole of Unicode).
FOLDS_ONTO_ASCII = "\u0130\u0131\u017f\u212a"


def folds_like_re(text: str) -> bool:
    """Whether lower-casing `text` finds exactly what `re.IGNORECASE` finds, at the same positions. (A search for a
    character wider than any in the text returns at once, so this costs little even on long texts.)"""
    return text.isascii() or not any(character in text for character in FOLDS_ONTO_ASCII)


# A literal the automaton stands for: its id, how to check it where it would start (None: no check), and how far
# before the pattern it starts.
_Target = tuple[int, Callable[[str, int], bool] | None, int]


class Literals:
    """The literals detectors look for, each with an id (`add`), all found in one pass: `found(text)` says where
    each starts in `text` (`Found.positions`: overlaps included, in order; None for a case-insensitive literal in a
    text that does not fold like `re`, `folds_like_re`). The last two texts' are kept.

    One automaton holds the case-sensitive literals and every ASCII case variant of the first `_PREFIX` characters
    of the case-insensitive ones (`Secret` -> `secret`, `SECRET`, `sEcReT`…); a longer literal is then checked
    where its prefix was found. Lower-casing the text and a second pass would cost more than the check. The
    automaton reads the text encoded as Latin-1, each character beyond it as `?` (one byte per character, so
    positions are the text's, and no UTF-8 to map back: 3-5x faster on a text with a few such characters); a
    literal holding `?` (or a character beyond Latin-1) is checked where found."""

    _PREFIX = 6

    def __init__(self) -> None:
        self._ids: dict[tuple[str, bool], int] = {}
        self._automaton: tuple[BytesAhoCorasick | None, list[tuple[_Target, ...]]] | None = None

    def add(self, words: Sequence[str], ignore_case: bool) -> tuple[int, ...]:
        ids = []
        for word in words:
            key = (word.lower() if ignore_case else word, ignore_case)
            if key not in self._ids:
                self._ids[key] = len(self._ids)
                self._automaton = None
                _found.cache_clear()
            ids.append(self._ids[key])
        return tuple(ids)

    def literals(self) -> list[tuple[str, bool, int]]:
        """Every literal: (word, ignore_case, id); a case-insensitive word is lower-cased."""
        return [(word, ignore_case, index) for (word, ignore_case), index in self._ids.items()]

    def found(self, text: str) -> Found:
        return _found(self, text)

    def scan(self, text: str) -> Found:
        automaton, targets = self._compiled()
        found: dict[int, list[int]] = {}
        if automaton is None:
            return Found(found, folds_like_re(text))
        by_pattern: defaultdict[int, list[int]] = defaultdict(list)
        for index, start, _ in automaton.find_matches_as_indexes(text.encode("latin-1", "replace"), overlapping=True):
            by_pattern[index].append(start)  # the least work per match: texts can hold one every few bytes
        for index, starts in by_pattern.items():
            for literal, check, before in targets[index]:
                if check is None:
                    found.setdefault(literal, []).extend(starts)
                elif checked := [start - before for start in starts if start >= before and check(text, start - before)]:
                    found.setdefault(literal, []).extend(checked)
        for starts in found.values():
            starts.sort()  # a case-insensitive literal's case variants are patterns of their own
        return Found(found, folds_like_re(text))

    def _compiled(self) -> tuple[BytesAhoCorasick | None, list[tuple[_Target, ...]]]:
        """The automaton, and for each of its patterns the literals it stands for."""
        if self._automaton is None:
            patterns: dict[bytes, list[_Target]] = {}
            for (word, ignore_case), index in self._ids.items():
                before = 0
                if ignore_case:
                    # A URL's literal (`https://hooks.`) by the part after its scheme, which few URLs share.
                    before = min(word.find("://") + 3, len(word) - self._PREFIX) if "://" in word else 0
                    variants = _case_variants(word[before:before + self._PREFIX])
                    check = _folded_check(word) if len(word) > self._PREFIX or "?" in word.encode(
                        "latin-1", "replace").decode("latin-1") else None
                else:
                    variants = [word]
                    check = _exact_check(word) if b"?" in word.encode("latin-1", "replace") else None
                for variant in variants:
                    patterns.setdefault(variant.encode("latin-1", "replace"), []).append((index, check, before))
            self._automaton = (
                BytesAhoCorasick(list(patterns), implementation=Implementation.DFA) if patterns else None,
                [tuple(targets) for targets in patterns.values()])
        return self._automaton


def _folded_check(word: str) -> Callable[[str, int], bool]:
    length = len(word)
    return lambda text, start: text[start:start + length].lower() == word


def _exact_check(word: str) -> Callable[[str, int], bool]:
    return lambda text, start: text.startswith(word, start)


class Found:
    """Where the literals are in one text: `positions(id)` in order, or None for a case-insensitive literal in a
    text that does not fold like `re`."""

    def __init__(self, found: dict[int, list[int]], folds: bool) -> None:
        self._found, self.folds = found, folds

    def holds_any(self, literals: frozenset[int]) -> bool:
        """Whether the text holds one of `literals` (case-sensitive ones, or any in a text that folds like `re`)."""
        return not literals.isdisjoint(self._found)

    def positions(self, literal: int, ignore_case: bool) -> list[int] | None:
        if ignore_case and not self.folds:
            return None
        return self._found.get(literal, _NONE)


_NONE: list[int] = []


def _case_variants(word: str) -> list[str]:
    """Every spelling of `word` with its ASCII letters in either case."""
    return ["".join(characters) for characters in itertools.product(
        *((character, character.upper()) if "a" <= character <= "z" else (character,) for character in word))]


@functools.lru_cache(maxsize=2)  # every detector asks about the text a scrub pass masked (two: threads)
def _found(literals: Literals, text: str) -> Found:
    return literals.scan(text)


LITERALS = Literals()


def literal_hint(*words: str, ignore_case: bool = False) -> Callable[[str], bool]:
    """Whether a text holds one of `words` (case-insensitively when `ignore_case`, as `re.IGNORECASE` would)."""
    regex = re.compile("|".join(re.escape(word) for word in words), re.IGNORECASE if ignore_case else 0)
    ids = frozenset(LITERALS.add(words, ignore_case))

    def hint(text: str) -> bool:
        found = LITERALS.found(text)
        if ignore_case and not found.folds:
            return regex.search(text) is not None
        return found.holds_any(ids)

    return hint


def positions(text: str, ids: Sequence[int], ignore_case: bool) -> list[int] | None:
    """Every position where one of the literals `ids` starts (overlaps included), in order, once each; None for
    case-insensitive literals in a text that does not fold like `re`."""
    found = LITERALS.found(text)
    if ignore_case and not found.folds:
        return None
    lists = [each for each in (found.positions(index, ignore_case) for index in ids) if each]
    if len(lists) <= 1:
        return lists[0] if lists else _NONE
    return sorted(set().union(*lists))


def anchored(pattern: re.Pattern[str], *words: str,
             lead: Sequence[int] = (0,)) -> Callable[[str], Iterator[re.Match[str]]]:
    """`pattern.finditer`, for a pattern each of whose matches starts with one of `words` (case-insensitively when
    the pattern is), or starts `lead` characters before one (`lead=range(8, 11)`: 8 to 10 characters before)."""
    ignore_case = bool(pattern.flags & re.IGNORECASE)
    ids = LITERALS.add(words, ignore_case)

    def finditer(text: str) -> Iterator[re.Match[str]]:
        starts = positions(text, ids, ignore_case)
        if starts is None:
            yield from pattern.finditer(text)
            return
        if tuple(lead) != (0,):
            starts = sorted({start - before for start in starts for before in lead if start >= before})
        done = 0
        for position in starts:
            if position < done:
                continue
            match = pattern.match(text, position)
            if match is not None:
                yield match
                done = max(match.end(), position + 1)

    return finditer
