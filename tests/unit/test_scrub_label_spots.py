"""The labelled-secret detector's shortcuts (issue 37, scrubbing speed) find what the plain scans find: labels tried
only where a label word stands (`label_spots`), a bare value's end found by one search, and the labels of a token
whose long values were all judged skipped in bulk."""

from __future__ import annotations

import random
import re
import sys

import pytest
from zengram.kernel import credentials
from zengram.kernel.label_spots import CLI_FLAG, LABEL, cli_flags, label_lines, label_matches
from zengram.kernel.secret_shapes import label_kind

from tests.data.credential_corpus import NEAR_MISSES, ORDINARY, POSITIVES

ATOMS = ["password", "Pa_ssword", "pa ss", "to ken", "pwd", "api key: ", "API_KEY=", "root ", "is:", " is ", " was ",
         "set to ", "token=", "a(token=", "secret", "key", "=", ":", "=>", ":=", "'", '"', "\n", " ", "\t", "-", ".",
         "é", "x" * 70, "&", ";", ",", "<", "&a=", ";b=", "hunter2", "1234"]


def texts(count: int, seed: int) -> list[str]:
    pieces = [credential.text for credential in POSITIVES] + ORDINARY + [
        text for near in NEAR_MISSES.values() for text in near]
    rng = random.Random(seed)
    glued = ["".join(rng.choice(ATOMS) if rng.random() < 0.7 else rng.choice(pieces) for _ in range(rng.randint(1, 12)))
             for _ in range(count)]
    return pieces + glued


def with_kind(matches: list[re.Match[str]]) -> list[tuple[int, int, str, str, str, str]]:
    """What the detector reads of each label match a kind comes of (the qualifier only through the kind: a
    qualifier the line scan took as part of an earlier separator, `is` or `was`, never names a kind)."""
    found = []
    for match in matches:
        kind = label_kind(match.group("label"), match.group("qualifier") or "", bare_equals=match.group("sep") == "=")
        if kind is not None:
            found.append((match.start("label"), match.end(), match.group("label"), match.group("quote"),
                          match.group("sep"), kind))
    return found


def test_labels_found_from_their_words_are_the_line_scans_labels() -> None:
    """Every label a kind comes of, with its qualifier and separator, exactly as `LABEL.finditer` finds it on each
    line holding a label word, on the corpus and on its fragments glued to labels, spread words (`Pa_ssword`,
    `to ken`), qualifiers and separators."""
    for text in texts(3000, 37):
        line_scan = [match for start, end in label_lines(text) for match in LABEL.finditer(text, start, end)]
        assert with_kind(list(label_matches(text))) == with_kind(line_scan), text


def test_a_bare_values_end_is_the_bare_token_patterns() -> None:
    rng = random.Random(3)
    for text in texts(500, 4):
        for start in {rng.randrange(len(text) + 1) for _ in range(5)}:
            match = credentials._BARE_TOKEN.match(text, start)
            assert credentials._token_end(credentials._BARE_TOKEN, text, start) == (match.end() if match else start)


@pytest.mark.parametrize("seed", ["token=", "a(token=", "key=k&token=", "token=x;token=", "token=<", "pass=",
                                  "secret_key=AbC123xyz0", "token:token:"])
def test_skipping_a_tokens_labels_in_bulk_skips_only_what_would_be_skipped(seed: str,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """On a long token of nested labels (some with short values before a `&`, `;` or `<`), the labelled
    secrets are the same with the bulk skip as without it."""
    rng = random.Random(seed)
    text = "".join(seed if rng.random() < 0.9 else rng.choice(["&a=b", ";c=d", "<", " ", "Xy9", "hunter2"])
                   for _ in range(600))
    skipped = list(credentials._labelled_secrets(text))
    monkeypatch.setattr(credentials, "_no_short_value_before", lambda text, start, token_end: 0)
    assert skipped == list(credentials._labelled_secrets(text))


def test_cli_flags_are_tried_after_every_kind_of_whitespace() -> None:
    """A flag is tried after whitespace and a `-`: the literals cover every character `\\s` matches (all below
    U+3001), so the flags found are the regex's own."""
    spaces = [character for character in map(chr, range(sys.maxunicode + 1)) if character.isspace()]
    assert max(spaces) < "\u3001"
    for space in spaces:
        text = f"run{space}--password{space}Hunter2x{space}-t{space}--token=AbCdEf123456"
        assert [match.span() for match in cli_flags(text)] == [
            match.span() for match in CLI_FLAG.finditer(text)], repr(space)
