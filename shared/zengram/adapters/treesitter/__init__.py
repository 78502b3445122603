"""The `CodeParser` port on tree-sitter, with the grammar wheels from PyPI (tree-sitter-python, -javascript,
-typescript, -go, -java, -rust). Grammars load on first use of their language.

One walker serves every language: a table says which node types define classes and functions, which are calls
(and which field holds the callee), imports and inheritance.
"""

from __future__ import annotations

import importlib
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from zengram.documents.domain.models import CodeStructure, Definition, Reference

MAX_TARGET_CHARS = 160


@dataclass(frozen=True)
class _Grammar:
    module: str
    entry: str = "language"
    classes: frozenset[str] = frozenset()
    functions: frozenset[str] = frozenset()
    calls: dict[str, str] = field(default_factory=dict)
    imports: frozenset[str] = frozenset()
    scopes: frozenset[str] = frozenset()  # nodes that name a scope without being an entity (Rust impl blocks)


_GRAMMARS: dict[str, _Grammar] = {
    "python": _Grammar("tree_sitter_python", classes=frozenset({"class_definition"}),
                       functions=frozenset({"function_definition"}), calls={"call": "function"},
                       imports=frozenset({"import_statement", "import_from_statement"})),
    "javascript": _Grammar(
        "tree_sitter_javascript", classes=frozenset({"class_declaration", "class"}),
        functions=frozenset({"function_declaration", "generator_function_declaration", "method_definition"}),
        calls={"call_expression": "function", "new_expression": "constructor"},
        imports=frozenset({"import_statement"})),
    "typescript": _Grammar(
        "tree_sitter_typescript", "language_typescript",
        classes=frozenset({"class_declaration", "abstract_class_declaration", "interface_declaration"}),
        functions=frozenset({"function_declaration", "generator_function_declaration", "method_definition"}),
        calls={"call_expression": "function", "new_expression": "constructor"},
        imports=frozenset({"import_statement"})),
    "go": _Grammar("tree_sitter_go", classes=frozenset({"type_spec"}),
                   functions=frozenset({"function_declaration", "method_declaration"}),
                   calls={"call_expression": "function"}, imports=frozenset({"import_spec"})),
    "java": _Grammar(
        "tree_sitter_java",
        classes=frozenset({"class_declaration", "interface_declaration", "enum_declaration", "record_declaration"}),
        functions=frozenset({"method_declaration", "constructor_declaration"}),
        calls={"method_invocation": "name", "object_creation_expression": "type"},
        imports=frozenset({"import_declaration"})),
    "rust": _Grammar("tree_sitter_rust", classes=frozenset({"struct_item", "enum_item", "trait_item"}),
                     functions=frozenset({"function_item"}), calls={"call_expression": "function"},
                     imports=frozenset({"use_declaration"}), scopes=frozenset({"impl_item"})),
}
_GRAMMARS["tsx"] = _Grammar(**{**_GRAMMARS["typescript"].__dict__, "entry": "language_tsx"})


class TreeSitterCodeParser:
    def __init__(self) -> None:
        self._parsers: dict[str, Any] = {}
        self._local = threading.local()  # a tree-sitter Parser is not safe to share between threads
        self._lock = threading.Lock()

    @property
    def languages(self) -> frozenset[str]:
        return frozenset(_GRAMMARS)

    def parse(self, text: str, language: str) -> CodeStructure:
        grammar = _GRAMMARS.get(language)
        if grammar is None:
            raise ValueError(f"no grammar for {language!r}")
        tree = self._parser(language).parse(text.encode("utf-8"))
        walker = _Walker(grammar, language)
        walker.visit(tree.root_node, scope=None)
        return CodeStructure(walker.definitions, walker.references)

    def _parser(self, language: str) -> Any:
        parsers: dict[str, Any] | None = getattr(self._local, "parsers", None)
        if parsers is None:
            parsers = self._local.parsers = {}
        if language not in parsers:
            from tree_sitter import Language, Parser

            grammar = _GRAMMARS[language]
            module = importlib.import_module(grammar.module)
            parsers[language] = Parser(Language(getattr(module, grammar.entry)()))
        return parsers[language]


def _text(node: Any) -> str:
    return str(node.text.decode("utf-8", errors="replace")) if node is not None else ""


def _compact(text: str) -> str:
    return " ".join(text.split())[:MAX_TARGET_CHARS]


class _Walker:
    def __init__(self, grammar: _Grammar, language: str) -> None:
        self.grammar = grammar
        self.language = language
        self.definitions: list[Definition] = []
        self.references: list[Reference] = []
        self._kinds: dict[str, str] = {}

    def visit(self, node: Any, scope: str | None) -> None:
        kind = node.type
        if kind in self.grammar.classes or kind in self.grammar.functions:
            defined = self._define(node, scope)
            if defined is not None:
                for child in node.named_children:
                    self.visit(child, defined)
                return
        if kind in self.grammar.scopes:
            self._impl_block(node, scope)
            return
        if kind == "variable_declarator" and self._is_function_value(node):
            defined = self._define(node, scope, forced_kind="function")
            if defined is not None:
                for child in node.named_children:
                    self.visit(child, defined)
                return
        if kind in self.grammar.calls:
            self._call(node, scope)
        elif kind in self.grammar.imports:
            self._imports(node, scope)
        for child in node.named_children:
            self.visit(child, scope)

    # -- definitions --------------------------------------------------------------------------------

    def _define(self, node: Any, scope: str | None, forced_kind: str | None = None) -> str | None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return None
        name = _text(name_node)
        if self.language == "go" and node.type == "type_spec":
            shape = node.child_by_field_name("type")
            if shape is None or shape.type not in ("struct_type", "interface_type"):
                return None
            self._embedded_types(shape, name)
        is_class = forced_kind is None and node.type in self.grammar.classes
        parent_kind = self._kinds.get(scope or "")
        if node.type == "method_declaration" and self.language == "go":
            receiver = _go_receiver(node)
            scope = receiver or scope
            parent_kind = "class" if receiver else parent_kind
        kind = "class" if is_class else ("method" if parent_kind == "class" else "function")
        qualified = f"{scope}.{name}" if scope else name
        start = node.parent if node.parent is not None and node.parent.type in (
            "decorated_definition", "export_statement") else node
        if node.type == "variable_declarator" and node.parent is not None:
            start = node.parent.parent if node.parent.parent is not None and \
                node.parent.parent.type == "export_statement" else node.parent
        self.definitions.append(Definition(name, qualified, kind, start.start_point[0] + 1, node.end_point[0] + 1,
                                           scope if parent_kind else None))
        self._kinds[qualified] = kind
        if is_class:
            self._bases(node, qualified)
        return qualified

    def _is_function_value(self, node: Any) -> bool:
        value = node.child_by_field_name("value")
        return value is not None and value.type in ("arrow_function", "function_expression", "function")

    def _impl_block(self, node: Any, scope: str | None) -> None:
        """Rust `impl [Trait for] Type { fn … }`: its functions are methods of Type."""
        type_node = node.child_by_field_name("type")
        owner = _text(type_node).split("<", 1)[0].strip() or (scope or "")
        self._kinds.setdefault(owner, "class")
        trait = node.child_by_field_name("trait")
        if trait is not None:
            self._reference("INHERITS", owner, _text(trait), trait)
        body = node.child_by_field_name("body")
        for child in (body.named_children if body is not None else []):
            self.visit(child, owner)

    def _bases(self, node: Any, qualified: str) -> None:
        if self.language == "python":
            bases = node.child_by_field_name("superclasses")
            for base in (bases.named_children if bases is not None else []):
                if base.type != "keyword_argument":
                    self._reference("INHERITS", qualified, _text(base), base)
            return
        for child in node.named_children:
            if child.type == "class_heritage":
                for clause in child.named_children:
                    relation = "INHERITS" if clause.type == "implements_clause" else "EXTENDS"
                    targets = clause.named_children if clause.type.endswith("_clause") else [clause]
                    for target in targets:
                        if target.type not in ("type_arguments",):
                            self._reference(relation, qualified, _text(target).split("<", 1)[0], target)
            elif child.type == "superclass":
                for target in child.named_children:
                    self._reference("EXTENDS", qualified, _text(target).split("<", 1)[0], target)
            elif child.type in ("super_interfaces", "extends_interfaces"):
                for target in _descendants(child, {"type_identifier", "scoped_type_identifier", "generic_type"}):
                    self._reference("INHERITS", qualified, _text(target).split("<", 1)[0], target)

    def _embedded_types(self, shape: Any, owner: str) -> None:
        """Go: a struct's anonymous fields (embedding) are its nearest thing to inheritance."""
        for declaration in _descendants(shape, {"field_declaration"}):
            if declaration.child_by_field_name("name") is None:
                kind = declaration.child_by_field_name("type")
                if kind is not None:
                    self._reference("INHERITS", owner, _text(kind).lstrip("*"), kind)

    # -- calls and imports ----------------------------------------------------------------------------

    def _call(self, node: Any, scope: str | None) -> None:
        callee = node.child_by_field_name(self.grammar.calls[node.type])
        if callee is None:
            return
        target = _text(callee)
        if node.type == "method_invocation":
            owner = node.child_by_field_name("object")
            target = f"{_text(owner)}.{target}" if owner is not None else target
        target = _without_arguments(target)
        if target:
            self._reference("CALLS", scope, target, node)

    def _imports(self, node: Any, scope: str | None) -> None:
        for target in self._import_targets(node):
            self._reference("IMPORTS", scope, target, node)

    def _import_targets(self, node: Any) -> Iterator[str]:
        kind = node.type
        if kind == "import_statement" and self.language == "python":
            for name in node.children_by_field_name("name"):
                yield _text(name.child_by_field_name("name") or name)
        elif kind == "import_from_statement":
            module = _text(node.child_by_field_name("module_name"))
            names = node.children_by_field_name("name")
            for name in names:
                yield f"{module}.{_text(name.child_by_field_name('name') or name)}".lstrip(".")
            if not names:
                yield module
        elif kind == "import_statement":  # JavaScript / TypeScript
            source = node.child_by_field_name("source")
            module = _text(source).strip("'\"`")
            if module:
                yield module.rsplit("/", 1)[-1].split(".", 1)[0] if "/" in module else module
            for specifier in _descendants(node, {"import_specifier", "namespace_import"}):
                name = specifier.child_by_field_name("name") if specifier.type == "import_specifier" else None
                yield _text(name if name is not None else specifier.named_children[-1])
            for clause in _descendants(node, {"import_clause"}):
                yield from (_text(child) for child in clause.named_children if child.type == "identifier")
        elif kind == "import_spec":  # Go
            yield _text(node.child_by_field_name("path")).strip('"`')
        elif kind == "import_declaration":  # Java
            for child in node.named_children:
                if child.type in ("scoped_identifier", "identifier"):
                    yield _text(child)
        elif kind == "use_declaration":  # Rust: every imported leaf name
            argument = node.child_by_field_name("argument")
            leaves = [leaf for leaf in _descendants(argument, {"identifier", "type_identifier"})
                      if leaf.parent is None or leaf.parent.child_by_field_name("path") != leaf]
            for leaf in leaves or ([argument] if argument is not None else []):
                yield _text(leaf)

    def _reference(self, relation: str, scope: str | None, target: str, node: Any) -> None:
        target = _compact(target)
        if target:
            self.references.append(Reference(relation, scope or "", target, node.start_point[0] + 1))


_ARGUMENTS = re.compile(r"\([^()]*\)|<[^<>]*>")


def _without_arguments(callee: str) -> str:
    """`A().m` → `A.m`, `make::<T>` → `make::`: the name called, without argument lists or type arguments."""
    previous = None
    while previous != callee:
        previous, callee = callee, _ARGUMENTS.sub("", callee)
    return callee.split("(", 1)[0].strip(" .:")


def _go_receiver(node: Any) -> str | None:
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return None
    for identifier in _descendants(receiver, {"type_identifier"}):
        return _text(identifier)
    return None


def _descendants(node: Any, types: set[str]) -> Iterator[Any]:
    if node is None:
        return
    stack: list[Any] = list(reversed(node.named_children))
    while stack:
        current = stack.pop()
        if current.type in types:
            yield current
        else:
            stack.extend(reversed(current.named_children))


def available(language: str, importer: Callable[[str], object] = importlib.import_module) -> bool:
    """Whether the grammar wheel of `language` is installed."""
    grammar = _GRAMMARS.get(language)
    if grammar is None:
        return False
    try:
        importer(grammar.module)
    except ImportError:
        return False
    return True
