"""The scrubber's cheap scans (`zengram.kernel.anchors`) find exactly what the regexes they stand for find."""

from __future__ import annotations

import re
import sys

import pytest
from zengram.kernel.anchors import FOLDS_ONTO_ASCII, anchored, literal_hint


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
