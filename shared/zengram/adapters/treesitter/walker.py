"""One walker for every language: it reads a syntax tree into definitions (classes, functions, methods) and
references (CALLS, IMPORTS, EXTENDS, INHERITS), as its language's `Grammar` names the node types."""

from __future__ import annotations

from typing import Any

from zengram.adapters.treesitter.languages import Grammar
from zengram.adapters.treesitter.nodes import (
    compact,
    definition_start,
    go_receiver,
    is_function_value,
    text,
    without_arguments,
)
from zengram.adapters.treesitter.relations import base_references, embedded_types, import_targets
from zengram.documents.domain.models import Definition, Reference


class Walker:
    def __init__(self, grammar: Grammar, language: str) -> None:
        self.grammar = grammar
        self.language = language
        self.definitions: list[Definition] = []
        self.references: list[Reference] = []
        self._kinds: dict[str, str] = {}

    def visit(self, node: Any, scope: str | None) -> None:
        defined = self._definition(node, scope)
        if defined is not None:
            self._visit_children(node, defined)
            return
        kind = node.type
        if kind in self.grammar.scopes:
            self._impl_block(node, scope)
            return
        if kind in self.grammar.calls:
            self._call(node, scope)
        elif kind in self.grammar.imports:
            self._imports(node, scope)
        self._visit_children(node, scope)

    def _visit_children(self, node: Any, scope: str | None) -> None:
        for child in node.named_children:
            self.visit(child, scope)

    # -- definitions --------------------------------------------------------------------------------

    def _definition(self, node: Any, scope: str | None) -> str | None:
        """The qualified name `node` defines (recorded), or None when it defines nothing."""
        kind = node.type
        if kind in self.grammar.classes or kind in self.grammar.functions:
            return self._define(node, scope)
        if kind == "variable_declarator" and is_function_value(node):
            return self._define(node, scope, forced_kind="function")
        return None

    def _define(self, node: Any, scope: str | None, forced_kind: str | None = None) -> str | None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return None
        name = text(name_node)
        if self.language == "go" and node.type == "type_spec" and not self._go_type(node, name):
            return None
        is_class = forced_kind is None and node.type in self.grammar.classes
        qualified = self._record(node, name, scope, is_class)
        if is_class:
            for relation, target, at in base_references(node, self.language):
                self._reference(relation, qualified, target, at)
        return qualified

    def _record(self, node: Any, name: str, scope: str | None, is_class: bool) -> str:
        """Records the definition of `name` by `node`; returns its qualified name."""
        scope, parent_kind = self._owner(node, scope)
        kind = "class" if is_class else ("method" if parent_kind == "class" else "function")
        qualified = f"{scope}.{name}" if scope else name
        start = definition_start(node)
        self.definitions.append(Definition(name, qualified, kind, start.start_point[0] + 1, node.end_point[0] + 1,
                                           scope if parent_kind else None))
        self._kinds[qualified] = kind
        return qualified

    def _go_type(self, node: Any, name: str) -> bool:
        """Go: whether the type spec defines a struct or an interface (recording the types a struct embeds)."""
        shape = node.child_by_field_name("type")
        if shape is None or shape.type not in ("struct_type", "interface_type"):
            return False
        for target, at in embedded_types(shape):
            self._reference("INHERITS", name, target, at)
        return True

    def _owner(self, node: Any, scope: str | None) -> tuple[str | None, str | None]:
        """The scope a definition belongs to and that scope's kind (a Go method belongs to its receiver's type)."""
        if node.type == "method_declaration" and self.language == "go":
            receiver = go_receiver(node)
            if receiver:
                return receiver, "class"
        return scope, self._kinds.get(scope or "")

    def _impl_block(self, node: Any, scope: str | None) -> None:
        """Rust `impl [Trait for] Type { fn … }`: its functions are methods of Type."""
        type_node = node.child_by_field_name("type")
        owner = text(type_node).split("<", 1)[0].strip() or (scope or "")
        self._kinds.setdefault(owner, "class")
        trait = node.child_by_field_name("trait")
        if trait is not None:
            self._reference("INHERITS", owner, text(trait), trait)
        body = node.child_by_field_name("body")
        for child in (body.named_children if body is not None else []):
            self.visit(child, owner)

    # -- calls and imports ----------------------------------------------------------------------------

    def _call(self, node: Any, scope: str | None) -> None:
        callee = node.child_by_field_name(self.grammar.calls[node.type])
        if callee is None:
            return
        target = text(callee)
        if node.type == "method_invocation":
            owner = node.child_by_field_name("object")
            target = f"{text(owner)}.{target}" if owner is not None else target
        target = without_arguments(target)
        if target:
            self._reference("CALLS", scope, target, node)

    def _imports(self, node: Any, scope: str | None) -> None:
        for target in import_targets(node, self.language):
            self._reference("IMPORTS", scope, target, node)

    def _reference(self, relation: str, scope: str | None, target: str, node: Any) -> None:
        target = compact(target)
        if target:
            self.references.append(Reference(relation, scope or "", target, node.start_point[0] + 1))
