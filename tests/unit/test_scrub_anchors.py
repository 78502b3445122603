"""The scrubber's cheap scans (`zengram.kernel.anchors`) find exactly what the regexes they stand for find."""

from __future__ import annotations

import random
import re
import sys

import pytest
from zengram.kernel.anchors import FOLDS_ONTO_ASCII, LITERALS, anchored, folds_like_re, literal_hint


def test_the_characters_that_fold_onto_ascii_are_all_listed() -> None:
    ascii_letter = re.compile(r"(?i)[a-z0-9]")
    folding = {character for character in map(chr, range(128, sys.maxunicode + 1))
               if ascii_letter.match(character) or len(character.lower()) != 1
               or any(ord(lower) < 128 for lower in character.lower())}
    assert folding == set(FOLDS_ONTO_ASCII)


@pytest.mark.parametrize("text", [
    "password: a, PASSWORD: b, xpassword: c", "paſsword: x", "PASSWORD\u212a: y", "İpassword: z ı",
    "naïve — password: ü-ok", "",
])
def test_anchored_matches_are_the_regexs_own(text: str) -> None:
    pattern = re.compile(r"(?i)(?<![\w])pa(?:s|ſ)?ssword\W*: \S+|password")
    assert [match.span() for match in anchored(pattern, "pass", "paſ")(text)] == [
        match.span() for match in pattern.finditer(text)]


@pytest.mark.parametrize(("text", "found"), [("my PassWord", True), ("my paſsword", True), ("ſecret", False),
                                             ("KEY", True), ("\u212aey", True), ("nothing here", False)])
def test_a_literal_hint_folds_case_as_the_regex_does(text: str, found: bool) -> None:
    hint = literal_hint("password", "key", ignore_case=True)
    assert hint(text) is found
    assert hint(text) is (re.search("(?i)password|key", text) is not None)


def test_one_scan_finds_every_literal_exactly_where_a_search_for_it_does() -> None:
    """All detectors' literals are found in one pass (`LITERALS`, case-insensitive ones through their first
    characters in every case, characters beyond Latin-1 read as `?`): each exactly where `str.find` finds it, on
    the text lower-cased for the case-insensitive ones, on the corpus in its own case, upper case and swapped
    case, glued to the literals and to characters beyond Latin-1."""
    import zengram.kernel.credentials  # noqa: F401  (registers the detectors' literals)

    from tests.data.credential_corpus import NEAR_MISSES, ORDINARY, POSITIVES

    pieces = [credential.text for credential in POSITIVES] + ORDINARY + [
        text for texts in NEAR_MISSES.values() for text in texts]
    literals = LITERALS.literals()
    words = [word for word, _, _ in literals]
    rng = random.Random(5)
    parts = words + pieces[:50] + [" ", "\n", "é", "-", "—", "\u2003", "€?"]
    glued = ["".join(rng.choice(parts) for _ in range(8)) for _ in range(300)]
    texts = [variant for text in pieces + glued for variant in (text, text.upper(), text.swapcase())]
    texts += ["paſsword \u212aey", "İpassword"]
    for text in texts:
        found = LITERALS.found(text)
        for word, ignore_case, index in literals:
            if ignore_case and not folds_like_re(text):
                assert found.positions(index, ignore_case) is None
                continue
            haystack = text.lower() if ignore_case else text
            expected, start = [], haystack.find(word)
            while start >= 0:
                expected.append(start)
                start = haystack.find(word, start + 1)
            assert found.positions(index, ignore_case) == expected, (word, text)


def test_a_literal_hint_is_true_exactly_where_its_literal_is() -> None:
    """A hint whose literal is checked where its first characters are (longer than six) is false where only
    those are."""
    hint = literal_hint("hooks.slack.com", ignore_case=True)
    assert not hint("hooks.slack.org hooks.sl")
    assert hint("see HOOKS.Slack.com")
