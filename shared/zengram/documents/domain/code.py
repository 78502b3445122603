"""Code split on definitions, and the graph a file's definitions and references make.

Each top-level class or function is a chunk (a class over the budget becomes its header plus one chunk per
method; anything still over the budget is cut on lines). Code between definitions (imports, constants) is
packed into module chunks. Entities and relations point at the chunk holding their line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import PurePosixPath

from zengram.documents.domain.chunking import Piece, estimate_tokens, pack, split_code_block
from zengram.documents.domain.chunking import _paragraphs as paragraphs
from zengram.documents.domain.models import (
    CodeEntity,
    CodeGraph,
    CodeStructure,
    Definition,
    EntityKind,
    Relation,
    RelationType,
)


def module_name(source: str) -> str:
    """A file's module name: its stem (`billing` for `…/billing.py`, `index` for `…/index.ts`)."""
    return PurePosixPath(source.replace("\\", "/")).stem


def split_code(text: str, definitions: Sequence[Definition], chunk_size: int, overlap: int) -> list[Piece]:
    lines = text.splitlines()
    children: dict[str | None, list[Definition]] = {}
    spans = {definition.qualified_name: definition for definition in definitions}
    for definition in definitions:
        parent = spans.get(definition.parent or "")
        inside = parent is not None and parent.start_line <= definition.start_line <= parent.end_line
        children.setdefault(parent.qualified_name if parent is not None and inside else None, []).append(definition)
    pieces = _split_span(lines, 1, len(lines), children.get(None, []), children, chunk_size, overlap, None)
    return sorted(pieces, key=lambda piece: (piece.start_line, piece.end_line))


def _split_span(lines: list[str], first: int, last: int, definitions: Sequence[Definition],
                children: dict[str | None, list[Definition]], chunk_size: int, overlap: int,
                owner: Definition | None) -> list[Piece]:
    """Lines first..last (1-based, inclusive) holding `definitions`: each definition its own piece(s), the
    lines between them packed together and attributed to `owner` (a class header) or the module."""
    pieces: list[Piece] = []
    gap: list[int] = []
    cursor = first
    for definition in sorted(definitions, key=lambda d: d.start_line):
        start, end = max(definition.start_line, cursor), min(definition.end_line, last)
        if start > end:
            continue
        gap += list(range(cursor, start))
        pieces += _definition_pieces(lines, start, end, definition, children, chunk_size, overlap)
        cursor = end + 1
    gap += list(range(cursor, last + 1))
    pieces += _gap_pieces(lines, gap, chunk_size, overlap, owner)
    return pieces


def _definition_pieces(lines: list[str], start: int, end: int, definition: Definition,
                       children: dict[str | None, list[Definition]], chunk_size: int, overlap: int) -> list[Piece]:
    text = "\n".join(lines[start - 1 : end])
    symbol, kind = definition.qualified_name, definition.kind
    if estimate_tokens(text) <= chunk_size:
        return [Piece(text, start, end, symbol=symbol, kind=kind)]
    members = children.get(definition.qualified_name, [])
    if members:
        return _split_span(lines, start, end, members, children, chunk_size, overlap, definition)
    return [replace(piece, symbol=symbol, kind=kind) for piece in split_code_block(text, start, chunk_size, overlap)]


def _gap_pieces(lines: list[str], numbers: list[int], chunk_size: int, overlap: int,
                owner: Definition | None) -> list[Piece]:
    """Runs of consecutive lines outside any definition, packed by blank-line paragraphs."""
    pieces: list[Piece] = []
    for run in _runs(numbers):
        blocks = paragraphs([lines[number - 1] for number in run], run[0])
        for piece in pack(blocks, chunk_size, overlap, joiner="\n\n"):
            if owner is not None:
                piece = replace(piece, symbol=owner.qualified_name, kind=owner.kind)
            else:
                piece = replace(piece, kind="module")
            pieces.append(piece)
    return pieces


def _runs(numbers: list[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for number in sorted(numbers):
        if runs and runs[-1][-1] == number - 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    return runs


def build_graph(source: str, language: str, structure: CodeStructure, pieces: Sequence[Piece],
                chunk_ids: Sequence[str]) -> CodeGraph:
    """Entities for the module and each definition; CONTAINS (module or class → member), DEFINED_IN (each
    definition → module) and the references the parser found. Each points at the chunk holding its line."""
    module = module_name(source)

    def chunk_at(line: int, symbol: str | None = None) -> str:
        holding = [index for index, piece in enumerate(pieces) if piece.start_line <= line <= piece.end_line]
        if symbol is not None:
            own = [index for index in holding if pieces[index].symbol == symbol]
            holding = own or holding
        if not holding:
            holding = [min(range(len(pieces)), key=lambda index: abs(pieces[index].start_line - line))] \
                if pieces else []
        return chunk_ids[holding[0]] if holding else ""

    def entity_id(qualified: str) -> str:
        return f"{source}::{qualified}"

    module_entity = CodeEntity(id=entity_id(module), name=module, qualified_name=module, kind=EntityKind.MODULE,
                               source=source, chunk_id=chunk_ids[0] if chunk_ids else "", language=language, line=1)
    entities = {module_entity.id: module_entity}
    relations: list[Relation] = []
    defined = {definition.qualified_name for definition in structure.definitions}
    for definition in structure.definitions:
        entity = CodeEntity(id=entity_id(definition.qualified_name), name=definition.name,
                            qualified_name=definition.qualified_name, kind=EntityKind(definition.kind), source=source,
                            chunk_id=chunk_at(definition.start_line, definition.qualified_name), language=language,
                            line=definition.start_line)
        entities.setdefault(entity.id, entity)
        parent = definition.parent if definition.parent in defined else None
        container = entity_id(parent) if parent else module_entity.id
        relations.append(Relation(type=RelationType.CONTAINS, source_entity=container,
                                  source_name=parent or module, target=definition.qualified_name, source=source,
                                  chunk_id=entities[container].chunk_id if container in entities else entity.chunk_id))
        relations.append(Relation(type=RelationType.DEFINED_IN, source_entity=entity.id,
                                  source_name=definition.qualified_name, target=module, source=source,
                                  chunk_id=entity.chunk_id))
    for reference in structure.references:
        owner = reference.source_name if reference.source_name in defined else None
        relations.append(Relation(type=RelationType(reference.type),
                                  source_entity=entity_id(owner) if owner else module_entity.id,
                                  source_name=owner or module, target=reference.target, source=source,
                                  chunk_id=chunk_at(reference.line)))
    return CodeGraph(entities=tuple(entities.values()), relations=tuple(dict.fromkeys(relations)))
