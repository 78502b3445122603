"""What a definition or an import statement names, per language: the bases a class extends or implements, the
types a Go struct embeds, the modules and names an import brings in."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from zengram.adapters.treesitter.nodes import descendants, text

# (relation, target, the node it was read from)
Base = tuple[str, str, Any]


def base_references(node: Any, language: str) -> Iterator[Base]:
    """The classes and interfaces the class `node` extends (EXTENDS) or implements (INHERITS)."""
    if language == "python":
        yield from _python_bases(node)
        return
    for child in node.named_children:
        if child.type == "class_heritage":
            yield from _heritage(child)
        elif child.type == "superclass":
            for target in child.named_children:
                yield "EXTENDS", _type_name(target), target
        elif child.type in ("super_interfaces", "extends_interfaces"):
            for target in descendants(child, {"type_identifier", "scoped_type_identifier", "generic_type"}):
                yield "INHERITS", _type_name(target), target


def _python_bases(node: Any) -> Iterator[Base]:
    bases = node.child_by_field_name("superclasses")
    for base in (bases.named_children if bases is not None else []):
        if base.type != "keyword_argument":
            yield "INHERITS", text(base), base


def _heritage(heritage: Any) -> Iterator[Base]:
    """JavaScript / TypeScript `extends …` and `implements …`."""
    for clause in heritage.named_children:
        relation = "INHERITS" if clause.type == "implements_clause" else "EXTENDS"
        targets = clause.named_children if clause.type.endswith("_clause") else [clause]
        for target in targets:
            if target.type not in ("type_arguments",):
                yield relation, _type_name(target), target


def _type_name(node: Any) -> str:
    return text(node).split("<", 1)[0]


def embedded_types(shape: Any) -> Iterator[tuple[str, Any]]:
    """Go: a struct's anonymous fields (embedding) are its nearest thing to inheritance."""
    for declaration in descendants(shape, {"field_declaration"}):
        if declaration.child_by_field_name("name") is None:
            kind = declaration.child_by_field_name("type")
            if kind is not None:
                yield text(kind).lstrip("*"), kind


def import_targets(node: Any, language: str) -> Iterator[str]:
    """The modules and names the import statement `node` brings in."""
    if node.type == "import_statement":
        return _python_import(node) if language == "python" else _javascript_import(node)
    reader = _IMPORT_READERS.get(node.type)
    return reader(node) if reader is not None else iter(())


def _python_import(node: Any) -> Iterator[str]:
    for name in node.children_by_field_name("name"):
        yield text(name.child_by_field_name("name") or name)


def _python_import_from(node: Any) -> Iterator[str]:
    module = text(node.child_by_field_name("module_name"))
    names = node.children_by_field_name("name")
    for name in names:
        yield f"{module}.{text(name.child_by_field_name('name') or name)}".lstrip(".")
    if not names:
        yield module


def _javascript_import(node: Any) -> Iterator[str]:
    """JavaScript / TypeScript: the module (its last path part), then each imported name."""
    source = node.child_by_field_name("source")
    module = text(source).strip("'\"`")
    if module:
        yield module.rsplit("/", 1)[-1].split(".", 1)[0] if "/" in module else module
    for specifier in descendants(node, {"import_specifier", "namespace_import"}):
        name = specifier.child_by_field_name("name") if specifier.type == "import_specifier" else None
        yield text(name if name is not None else specifier.named_children[-1])
    for clause in descendants(node, {"import_clause"}):
        yield from (text(child) for child in clause.named_children if child.type == "identifier")


def _go_import(node: Any) -> Iterator[str]:
    yield text(node.child_by_field_name("path")).strip('"`')


def _java_import(node: Any) -> Iterator[str]:
    for child in node.named_children:
        if child.type in ("scoped_identifier", "identifier"):
            yield text(child)


def _rust_use(node: Any) -> Iterator[str]:
    """Rust: every imported leaf name."""
    argument = node.child_by_field_name("argument")
    leaves = [leaf for leaf in descendants(argument, {"identifier", "type_identifier"})
              if leaf.parent is None or leaf.parent.child_by_field_name("path") != leaf]
    for leaf in leaves or ([argument] if argument is not None else []):
        yield text(leaf)


_IMPORT_READERS: dict[str, Callable[[Any], Iterator[str]]] = {
    "import_from_statement": _python_import_from,
    "import_spec": _go_import,
    "import_declaration": _java_import,
    "use_declaration": _rust_use,
}
