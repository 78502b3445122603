"""Splitting documents and code into chunks: sections, budgets, overlap, definitions."""

from __future__ import annotations

import itertools

from zengram.documents.domain.chunking import estimate_tokens, split_markdown, split_pages, split_plain
from zengram.documents.domain.code import split_code
from zengram.documents.domain.models import Definition, chunk_id_for, split_identifiers

GUIDE = """# Guide

Intro paragraph.

## Setup

Install it.

### Linux

Use apt.
```sh
# not a heading
apt install x
```

## Usage

Run it.
"""


def test_markdown_chunks_carry_their_heading_path() -> None:
    pieces = split_markdown(GUIDE, chunk_size=512, overlap=0)
    assert [piece.section for piece in pieces] == ["Guide", "Guide > Setup", "Guide > Setup > Linux", "Guide > Usage"]
    linux = pieces[2]
    assert "# not a heading" in linux.text and "apt install x" in linux.text
    assert (linux.start_line, linux.end_line) == (9, 15)


def test_long_text_is_cut_within_the_budget_with_overlap() -> None:
    paragraphs = [f"Paragraph {n} " + "word " * 60 for n in range(12)]
    pieces = split_plain("\n\n".join(paragraphs), chunk_size=100, overlap=20)
    assert len(pieces) > 3
    assert all(estimate_tokens(piece.text) <= 100 + 20 + 1 for piece in pieces)
    for before, after in itertools.pairwise(pieces):
        tail = before.text.split()[-5:]
        assert " ".join(tail) in after.text  # the overlap repeats the end of the previous chunk
    assert "Paragraph 11" in pieces[-1].text


def test_a_single_huge_line_is_cut_too() -> None:
    pieces = split_plain("x" * 10_000, chunk_size=100, overlap=0)
    assert len(pieces) == 25 and all(len(piece.text) <= 400 for piece in pieces)


def test_pdf_pages_never_share_a_chunk() -> None:
    pieces = split_pages(["first page text", "second page text"], chunk_size=512, overlap=50)
    assert [(piece.page, piece.text) for piece in pieces] == [(1, "first page text"), (2, "second page text")]


CODE = "\n".join([
    "import os",                      # 1
    "",                               # 2
    "def small():",                   # 3
    "    return 1",                   # 4
    "",                               # 5
    "class Big:",                     # 6
    "    x = 1",                      # 7
    *[f"    def m{n}(self):\n        return '{'y' * 150}'" for n in range(4)],  # 8..15
])


def test_code_splits_on_definitions_and_a_big_class_on_its_methods() -> None:
    definitions = [Definition("small", "small", "function", 3, 4, None), Definition("Big", "Big", "class", 6, 15, None),
                   *[Definition(f"m{n}", f"Big.m{n}", "method", 8 + 2 * n, 9 + 2 * n, "Big") for n in range(4)]]
    pieces = split_code(CODE, definitions, chunk_size=120, overlap=0)
    symbols = [(piece.symbol, piece.kind) for piece in pieces]
    assert (None, "module") in symbols
    assert ("small", "function") in symbols
    assert ("Big", "class") in symbols  # the header (`class Big:`, `x = 1`)
    assert [symbol for symbol, kind in symbols if kind == "method"] == ["Big.m0", "Big.m1", "Big.m2", "Big.m3"]
    covered = sorted(line for piece in pieces for line in range(piece.start_line, piece.end_line + 1))
    assert covered == sorted(set(covered))  # no line in two pieces


def test_chunk_ids_are_stable_and_distinct() -> None:
    assert chunk_id_for("/a/b.md", 0) == chunk_id_for("/a/b.md", 0)
    assert len({chunk_id_for("/a/b.md", n) for n in range(100)} | {chunk_id_for("/a/c.md", 0)}) == 101


def test_identifiers_become_words() -> None:
    assert split_identifiers("parse_config getHTTPServer Cart.total") == "parse config get HTTP Server Cart total"
