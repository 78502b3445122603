"""Splitting text into chunks of about `chunk_size` tokens: Markdown on headings then paragraphs, plain text on
paragraphs, PDF page by page, and long code blocks on lines.

A token is estimated as four characters (the usual figure for English and code with BPE tokenizers): chunking
needs a budget, not an exact count, and a tokenizer pass over every file would cost more than the split.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

CHARS_PER_TOKEN = 4
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def estimate_tokens(text: str) -> int:
    return max(1, -(-len(text) // CHARS_PER_TOKEN))


@dataclass(frozen=True)
class Piece:
    """A chunk's text and where it sits, before it gets an id."""

    text: str
    start_line: int
    end_line: int
    section: str | None = None
    page: int | None = None
    symbol: str | None = None
    kind: str | None = None


@dataclass(frozen=True)
class _Block:
    text: str
    start_line: int
    end_line: int


def split_markdown(text: str, chunk_size: int, overlap: int) -> list[Piece]:
    """Each heading starts a section (named by its heading path, `Setup > Linux`); a section's paragraphs are
    packed into chunks. `#` lines inside fenced code are not headings."""
    pieces: list[Piece] = []
    for section, blocks in _markdown_sections(text.splitlines()):
        pieces += [replace(piece, section=section) for piece in pack(blocks, chunk_size, overlap)]
    return pieces


def split_plain(text: str, chunk_size: int, overlap: int) -> list[Piece]:
    return pack(_paragraphs(text.splitlines(), 1), chunk_size, overlap)


def split_pages(pages: Sequence[str], chunk_size: int, overlap: int) -> list[Piece]:
    """PDF text: chunks never span two pages, so each carries its page number (1-based)."""
    pieces: list[Piece] = []
    for number, page in enumerate(pages, start=1):
        pieces += [replace(piece, page=number) for piece in pack(_paragraphs(page.splitlines(), 1), chunk_size,
                                                                   overlap)]
    return pieces


def split_code_block(text: str, start_line: int, chunk_size: int, overlap: int) -> list[Piece]:
    """A definition longer than the budget, cut between lines (each part keeps its line numbers)."""
    lines = text.splitlines()
    blocks = [_Block(line, start_line + offset, start_line + offset) for offset, line in enumerate(lines)]
    return pack(blocks, chunk_size, overlap, joiner="\n")


def pack(blocks: Sequence[_Block], chunk_size: int, overlap: int, *, joiner: str = "\n\n") -> list[Piece]:
    """Greedy packing of whole blocks up to the budget; a block over the budget is cut on lines, then on words.
    Each chunk after the first starts with the last ~`overlap` tokens of the one before."""
    budget = max(1, chunk_size) * CHARS_PER_TOKEN
    carry = max(0, min(overlap, chunk_size // 2)) * CHARS_PER_TOKEN
    pieces: list[Piece] = []
    current: list[_Block] = []
    size = 0

    def flush() -> None:
        nonlocal current, size
        if not current:
            return
        body = joiner.join(block.text for block in current).strip()
        if body:
            prefix = _tail(pieces[-1].text, carry) if pieces and carry else ""
            pieces.append(Piece(f"{prefix}\n{body}" if prefix else body, current[0].start_line, current[-1].end_line))
        current, size = [], 0

    for block in _fitting(blocks, budget):
        if current and size + len(block.text) + len(joiner) > budget:
            flush()
        current.append(block)
        size += len(block.text) + len(joiner)
    flush()
    return pieces


def _fitting(blocks: Sequence[_Block], budget: int) -> Iterator[_Block]:
    for block in blocks:
        if len(block.text) <= budget:
            yield block
            continue
        lines = block.text.splitlines() or [block.text]
        for offset, line in enumerate(lines):
            number = block.start_line + offset
            for start in range(0, max(len(line), 1), budget):
                yield _Block(_word_cut(line, start, budget), number, number)


def _word_cut(line: str, start: int, budget: int) -> str:
    return line[start : start + budget]


def _tail(text: str, chars: int) -> str:
    """About the last `chars` characters, starting at a word boundary."""
    if len(text) <= chars:
        return text
    tail = text[-chars:]
    space = tail.find(" ")
    return tail[space + 1 :] if 0 <= space < len(tail) // 2 else tail


def _markdown_sections(lines: Sequence[str]) -> Iterator[tuple[str | None, list[_Block]]]:
    path: list[tuple[int, str]] = []
    section_lines: list[tuple[int, str]] = []
    in_fence = False
    section: str | None = None
    for number, line in enumerate(lines, start=1):
        if _FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING.match(line)
        if heading is None:
            section_lines.append((number, line))
            continue
        if any(text.strip() for _, text in section_lines):
            yield section, _paragraphs_numbered(section_lines)
        level, title = len(heading.group(1)), heading.group(2).strip()
        path = [(lvl, name) for lvl, name in path if lvl < level] + [(level, title)]
        section = " > ".join(name for _, name in path)
        section_lines = [(number, line)]
    if any(text.strip() for _, text in section_lines):
        yield section, _paragraphs_numbered(section_lines)


def _paragraphs(lines: Sequence[str], first_line: int) -> list[_Block]:
    return _paragraphs_numbered([(first_line + offset, line) for offset, line in enumerate(lines)])


def _paragraphs_numbered(lines: Sequence[tuple[int, str]]) -> list[_Block]:
    """Blank-line separated blocks; a fenced code block stays one block whatever blank lines it holds."""
    blocks: list[_Block] = []
    current: list[tuple[int, str]] = []
    in_fence = False
    for number, line in lines:
        if _FENCE.match(line):
            in_fence = not in_fence
        if not line.strip() and not in_fence:
            if current:
                blocks.append(_block(current))
                current = []
            continue
        current.append((number, line))
    if current:
        blocks.append(_block(current))
    return blocks


def _block(lines: list[tuple[int, str]]) -> _Block:
    return _Block("\n".join(text for _, text in lines), lines[0][0], lines[-1][0])
