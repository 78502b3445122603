"""Which tree-sitter grammar serves each language, and what its node types mean: which define classes and
functions, which are calls (and which field holds the callee), imports and scopes. Grammar wheels from PyPI
(tree-sitter-python, -javascript, -typescript, -go, -java, -rust) load on first use of their language."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Grammar:
    module: str
    entry: str = "language"
    classes: frozenset[str] = frozenset()
    functions: frozenset[str] = frozenset()
    calls: dict[str, str] = field(default_factory=dict)
    imports: frozenset[str] = frozenset()
    scopes: frozenset[str] = frozenset()  # nodes that name a scope without being an entity (Rust impl blocks)


GRAMMARS: dict[str, Grammar] = {
    "python": Grammar("tree_sitter_python", classes=frozenset({"class_definition"}),
                      functions=frozenset({"function_definition"}), calls={"call": "function"},
                      imports=frozenset({"import_statement", "import_from_statement"})),
    "javascript": Grammar(
        "tree_sitter_javascript", classes=frozenset({"class_declaration", "class"}),
        functions=frozenset({"function_declaration", "generator_function_declaration", "method_definition"}),
        calls={"call_expression": "function", "new_expression": "constructor"},
        imports=frozenset({"import_statement"})),
    "typescript": Grammar(
        "tree_sitter_typescript", "language_typescript",
        classes=frozenset({"class_declaration", "abstract_class_declaration", "interface_declaration"}),
        functions=frozenset({"function_declaration", "generator_function_declaration", "method_definition"}),
        calls={"call_expression": "function", "new_expression": "constructor"},
        imports=frozenset({"import_statement"})),
    "go": Grammar("tree_sitter_go", classes=frozenset({"type_spec"}),
                  functions=frozenset({"function_declaration", "method_declaration"}),
                  calls={"call_expression": "function"}, imports=frozenset({"import_spec"})),
    "java": Grammar(
        "tree_sitter_java",
        classes=frozenset({"class_declaration", "interface_declaration", "enum_declaration", "record_declaration"}),
        functions=frozenset({"method_declaration", "constructor_declaration"}),
        calls={"method_invocation": "name", "object_creation_expression": "type"},
        imports=frozenset({"import_declaration"})),
    "rust": Grammar("tree_sitter_rust", classes=frozenset({"struct_item", "enum_item", "trait_item"}),
                    functions=frozenset({"function_item"}), calls={"call_expression": "function"},
                    imports=frozenset({"use_declaration"}), scopes=frozenset({"impl_item"})),
}
GRAMMARS["tsx"] = Grammar(**{**GRAMMARS["typescript"].__dict__, "entry": "language_tsx"})


def new_parser(language: str) -> Any:
    """A tree-sitter `Parser` for `language` (imports its grammar wheel)."""
    from tree_sitter import Language, Parser

    grammar = GRAMMARS[language]
    module = importlib.import_module(grammar.module)
    return Parser(Language(getattr(module, grammar.entry)()))


def available(language: str, importer: Callable[[str], object] = importlib.import_module) -> bool:
    """Whether the grammar wheel of `language` is installed."""
    grammar = GRAMMARS.get(language)
    if grammar is None:
        return False
    try:
        importer(grammar.module)
    except ImportError:
        return False
    return True
