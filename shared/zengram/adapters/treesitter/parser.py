"""`TreeSitterCodeParser`: the `CodeParser` port on tree-sitter (one parser per language and thread)."""

from __future__ import annotations

import threading
from typing import Any

from zengram.adapters.treesitter.languages import GRAMMARS, new_parser
from zengram.adapters.treesitter.walker import Walker
from zengram.documents.domain.models import CodeStructure


class TreeSitterCodeParser:
    def __init__(self) -> None:
        self._parsers: dict[str, Any] = {}
        self._local = threading.local()  # a tree-sitter Parser is not safe to share between threads
        self._lock = threading.Lock()

    @property
    def languages(self) -> frozenset[str]:
        return frozenset(GRAMMARS)

    def parse(self, text: str, language: str) -> CodeStructure:
        grammar = GRAMMARS.get(language)
        if grammar is None:
            raise ValueError(f"no grammar for {language!r}")
        tree = self._parser(language).parse(text.encode("utf-8"))
        walker = Walker(grammar, language)
        walker.visit(tree.root_node, scope=None)
        return CodeStructure(walker.definitions, walker.references)

    def _parser(self, language: str) -> Any:
        parsers: dict[str, Any] | None = getattr(self._local, "parsers", None)
        if parsers is None:
            parsers = self._local.parsers = {}
        if language not in parsers:
            parsers[language] = new_parser(language)
        return parsers[language]
