"""Where the credential detectors' labels can be (`password: …`, `API_KEY=…`, `--token …`), found without matching
every word of a text as a candidate label (issue 37: that was most of the scrubbing time of ordinary text).

A label has a kind (`secret_shapes.label_kind`) only if its ASCII letter and digit runs, lower-cased and joined,
hold one of `LABEL_WORDS`; so does the text squeezed the same way (`_squeezed`, newlines kept: a label never
spans lines). `label_matches` gives what `LABEL.finditer` gives on the lines holding such a word, from the places
where a label word stands in the text itself (`anchors.LITERALS`): `LABEL` matches a whole run of `[\\w.-]`
(at most 64 characters, after an optional one-word qualifier) followed by a separator, so only the runs holding a
label word and followed by a separator are tried. (Where the line scan took an `is` or `was` for an earlier
separator and this takes it for a qualifier, the kind is the same: neither qualifies a key.) A line where the
squeezed text holds more label words than the text itself (`pa_ss: x`, `to ken`: a word spread over a run or
two) is matched whole, as before.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator

from zengram.kernel.anchors import LITERALS, positions

LABEL = re.compile(r"""(?x)
    (?<![\w.-])
    (?:(?P<qualifier>[A-Za-z]{2,20})[ ])?        # "API key", "root password"
    (?P<label>[A-Za-z][\w.-]{0,63})
    (?P<quote>["']?)
    (?P<sep>[ \t]*(?:=>|:=|=(?!=)|:(?![:/]))[ \t]*|[ \t]+(?:is|was)[ \t]+(?:set[ \t]+to[ \t]+)?)
""")
# A run of `[\w.-]` followed by what must follow a label for `LABEL` to match: the start of a quote and separator.
_RUN_AND_SEPARATOR = re.compile(r"""[\w.-]*+(?=["']?(?:[ \t]*(?:=>|:=|=(?!=)|:(?![:/]))|[ \t]+(?:is|was)[ \t]))""")
_LONGEST_LABEL = 64
_LONGEST_QUALIFIER = 20

LABEL_WORDS = ("pass", "pwd", "secret", "token", "key", "credential")
_WORD_BYTES = tuple(word.encode() for word in LABEL_WORDS)
_WORD_IDS = LITERALS.add(LABEL_WORDS, ignore_case=True)
_NOT_ALNUM_OR_NEWLINE = bytes(code for code in range(128) if not chr(code).isalnum() and chr(code) != "\n")
_BYTE_NEWLINE = re.compile(b"\n")
_NEWLINE = re.compile("\n")


@functools.lru_cache(maxsize=2)
def _squeezed(text: str) -> bytes:
    """`text`'s ASCII letters and digits, lower-cased, and its newlines: non-ASCII characters are dropped by the
    encoding, the rest by `translate`."""
    return text.encode("ascii", "ignore").lower().translate(None, _NOT_ALNUM_OR_NEWLINE)


@functools.lru_cache(maxsize=2)  # the three label detectors ask about the same text
def may_hold_a_label(text: str) -> bool:
    """Whether `text` may hold a label `label_kind` names (`password`, `passwd`, `pass`, `pwd`, `secret`,
    `token`, `key`, `credential`…)."""
    squeezed = _squeezed(text)
    return any(word in squeezed for word in _WORD_BYTES)


@functools.lru_cache(maxsize=2)
def label_lines(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each line holding a label word once squeezed."""
    return _lines_where(text, sorted(set(_squeezed_lines(text))))


class Skip:
    """Where the caller of `label_matches` wants the next label word: the labels whose words stand before `to`
    (outside the lines matched whole) are of no use to it."""

    to = 0


def label_matches(text: str, skip: Skip | None = None) -> Iterator[re.Match[str]]:
    """`LABEL.finditer` on each of `label_lines`, tried only where a run holding a label word is followed by a
    separator (see the module's doc)."""
    found = LITERALS.found(text)
    if not found.folds:
        for start, end in label_lines(text):
            yield from LABEL.finditer(text, start, end)
        return
    words = [found.positions(index, True) or [] for index in _WORD_IDS]
    squeezed = _squeezed(text)
    if sum(squeezed.count(word) for word in _WORD_BYTES) == sum(map(len, words)):
        spread: list[tuple[int, int]] = []  # every label word of the squeezed text stands in the text as such
    else:
        spread = _spread_lines(text, words)
    yield from _label_runs(text, sorted(position for each in words for position in each), spread,
                           skip or Skip())


def _label_runs(text: str, words: list[int], spread: list[tuple[int, int]], skip: Skip) -> Iterator[re.Match[str]]:
    """`LABEL.finditer` on the lines holding a label word, from the positions of the label words (`words`), and on
    each line of `spread` whole."""
    done = last_run = 0
    next_spread = 0
    for word in words:
        while next_spread < len(spread) and spread[next_spread][1] < word:
            yield from LABEL.finditer(text, *spread[next_spread])
            done = spread[next_spread][1]
            next_spread += 1
        if next_spread < len(spread) and spread[next_spread][0] <= word:
            continue  # on a line matched whole
        if word < done or word < skip.to:
            continue  # inside the last match, or skipped
        run = _RUN_AND_SEPARATOR.match(text, word)
        if run is None or run.end() == last_run:
            continue  # no separator after the run, or another word of the last run
        last_run = run.end()
        match = _label_at(text, word, last_run, done)
        if match is not None:
            yield match
            done = match.end()
    for line in spread[next_spread:]:
        yield from LABEL.finditer(text, *line)


def _label_at(text: str, word: int, run_end: int, done: int) -> re.Match[str] | None:
    r"""`LABEL`'s match for the run of `[\w.-]` holding `word` and ending at `run_end` (before a separator), when
    its label can be that run: it starts with an ASCII letter and holds at most 64 characters. The match starts at
    the qualifier before it when there is one (not inside the last match, which ends at `done`)."""
    start, floor = word, max(done, run_end - _LONGEST_LABEL - 1)
    while start > floor and ((character := text[start - 1]).isalnum() or character in "_.-"):
        start -= 1
    if run_end - start > _LONGEST_LABEL or (start > 0 and _in_run(text[start - 1])) or not _ascii_letter(
            text[start]):
        return None  # too long, starting before the last match ends, or not starting with a letter
    qualifier = start - 1
    if qualifier > done and text[qualifier] == " ":
        floor = max(done, qualifier - _LONGEST_QUALIFIER - 1)
        while qualifier > floor and _ascii_letter(text[qualifier - 1]):
            qualifier -= 1
        letters = start - 1 - qualifier
        if 2 <= letters <= _LONGEST_QUALIFIER and (qualifier == 0 or not _in_run(text[qualifier - 1])):
            start = qualifier
    return LABEL.match(text, start)


def _in_run(character: str) -> bool:
    r"""`[\w.-]`: `\w` is a letter, digit or underscore in any script (`str.isalnum`)."""
    return character.isalnum() or character in "_.-"


def _ascii_letter(character: str) -> bool:
    return "a" <= character <= "z" or "A" <= character <= "Z"


def _spread_lines(text: str, words: list[list[int]]) -> list[tuple[int, int]]:
    """The lines whose squeezed text holds more label words than the text itself: there a word is spread over
    characters squeezing drops."""
    breaks = [match.start() for match in _NEWLINE.finditer(text)]
    in_text: dict[int, int] = {}
    for word_positions in words:
        for position in word_positions:
            line = bisect.bisect_left(breaks, position)
            in_text[line] = in_text.get(line, 0) + 1
    in_squeezed: dict[int, int] = {}
    for line in _squeezed_lines(text):
        in_squeezed[line] = in_squeezed.get(line, 0) + 1
    return _spans(text, breaks, sorted(line for line, count in in_squeezed.items() if count > in_text.get(line, 0)))


def _squeezed_lines(text: str) -> list[int]:
    """The line of each label word in the squeezed text, once per word found."""
    squeezed = _squeezed(text)
    squeezed_breaks: list[int] | None = None
    lines = []
    for word in _WORD_BYTES:
        position = squeezed.find(word)
        while position >= 0:
            if squeezed_breaks is None:
                squeezed_breaks = [match.start() for match in _BYTE_NEWLINE.finditer(squeezed)]
            lines.append(bisect.bisect_left(squeezed_breaks, position))
            position = squeezed.find(word, position + 1)
    return lines


def _lines_where(text: str, lines: list[int]) -> list[tuple[int, int]]:
    if not lines:
        return []
    return _spans(text, [match.start() for match in _NEWLINE.finditer(text)], lines)


def _spans(text: str, breaks: list[int], lines: list[int]) -> list[tuple[int, int]]:
    """The (start, end) of each of `lines` (in order), `breaks` the positions of the newlines."""
    return [(breaks[line - 1] + 1 if line else 0, breaks[line] if line < len(breaks) else len(text))
            for line in lines]


CLI_FLAG = re.compile(r"(?<!\S)--?(?P<label>[A-Za-z][\w-]{2,63})(?:=|[ \t]+)(?!-)"
                      r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"']+)")
# A flag starts with `-` after whitespace (`\s`: every character `str.isspace` takes, all below U+3001) or at the
# start of the text: the regex is tried only there.
_FLAG_STARTS = LITERALS.add([f"{space}-" for space in map(chr, range(0x3001)) if space.isspace()], ignore_case=False)


def cli_flags(text: str) -> Iterator[re.Match[str]]:
    """`CLI_FLAG.finditer(text)`: `--password hunter2`, `-t`, `--token=…`."""
    done = 0
    for start in ([0] if text.startswith("-") else []) + [at + 1 for at in positions(text, _FLAG_STARTS, False) or ()]:
        if start < done:
            continue
        match = CLI_FLAG.match(text, start)
        if match is not None:
            yield match
            done = match.end()
