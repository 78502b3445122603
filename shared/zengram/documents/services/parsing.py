"""One file's bytes → its chunks (with metadata) and its code graph, by format.

The text is scrubbed of credentials before it is split (docs/documents.md#credentials-in-indexed-files): a secret
in an indexed file is never stored, embedded, indexed or served back, and a secret that a chunk boundary would
cut in two is still found whole."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import PurePosixPath

from zengram.documents.domain.chunking import Piece, split_markdown, split_pages, split_plain
from zengram.documents.domain.code import build_graph, split_code
from zengram.documents.domain.files import FileKind
from zengram.documents.domain.models import (
    Chunk,
    ChunkMetadata,
    CodeGraph,
    IndexOptions,
    ParsedFile,
    chunk_id_for,
)
from zengram.documents.ports import CodeParser, PdfTextExtractor

logger = logging.getLogger(__name__)
_BINARY_SNIFF = 8192


class UnreadableFile(ValueError):
    """The file cannot be indexed (binary where text was expected, a broken PDF); the job goes on without it."""


class FileParser:
    def __init__(self, code: CodeParser | None, pdf: PdfTextExtractor | None,
                 scrub: Callable[[str], str] | None = None) -> None:
        """`scrub` (the credential scrubber's `scrub`) rewrites each file's text, or each PDF page's, first."""
        self._code = code
        self._pdf = pdf
        self._scrub = scrub or (lambda text: text)

    def parse(self, source: str, kind: FileKind, content: bytes, options: IndexOptions) -> ParsedFile:
        size, overlap = options.chunk_size, options.chunk_overlap
        graph = CodeGraph()
        if kind.format == "pdf":
            if self._pdf is None:
                raise UnreadableFile("no PDF reader configured")
            try:
                pieces = split_pages([self._scrub(page) for page in self._pdf.pages(content)], size, overlap)
            except ValueError as error:
                raise UnreadableFile(str(error)) from error
        else:
            text = self._scrub(_decode(content))
            if kind.format == "markdown":
                pieces = split_markdown(text, size, overlap)
            elif kind.format == "code" and self._code is not None and kind.language in self._code.languages:
                assert kind.language is not None
                structure = self._code.parse(text, kind.language)
                pieces = split_code(text, structure.definitions, size, overlap)
                ids = [chunk_id_for(source, index) for index in range(len(pieces))]
                graph = build_graph(source, _graph_language(kind.language), structure, pieces, ids)
            else:
                pieces = split_plain(text, size, overlap)
        return ParsedFile(chunks=tuple(_chunk(source, index, piece, kind) for index, piece in enumerate(pieces)),
                          graph=graph)


def _decode(content: bytes) -> str:
    if b"\x00" in content[:_BINARY_SNIFF]:
        raise UnreadableFile("binary content")
    return content.decode("utf-8", errors="replace").replace("\r\n", "\n")


def _graph_language(language: str) -> str:
    return "typescript" if language == "tsx" else language


def _chunk(source: str, index: int, piece: Piece, kind: FileKind) -> Chunk:
    language = _graph_language(kind.language) if kind.language else None
    metadata = ChunkMetadata(source_type=kind.source_type, language=language, section=piece.section,
                             symbol=piece.symbol, kind=piece.kind, page=piece.page, start_line=piece.start_line,
                             end_line=piece.end_line, file_name=PurePosixPath(source).name)
    return Chunk(id=chunk_id_for(source, index), source=source, index=index, text=piece.text, metadata=metadata)
