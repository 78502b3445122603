"""Reading tree-sitter nodes: their text, their descendants of some types, and the names they hold."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

MAX_TARGET_CHARS = 160
_ARGUMENTS = re.compile(r"\([^()]*\)|<[^<>]*>")


def text(node: Any) -> str:
    return str(node.text.decode("utf-8", errors="replace")) if node is not None else ""


def compact(value: str) -> str:
    return " ".join(value.split())[:MAX_TARGET_CHARS]


def descendants(node: Any, types: set[str]) -> Iterator[Any]:
    """The nearest descendants of `node` of one of `types`, in source order (not below one found)."""
    if node is None:
        return
    stack: list[Any] = list(reversed(node.named_children))
    while stack:
        current = stack.pop()
        if current.type in types:
            yield current
        else:
            stack.extend(reversed(current.named_children))


def without_arguments(callee: str) -> str:
    """`A().m` → `A.m`, `make::<T>` → `make::`: the name called, without argument lists or type arguments."""
    previous = None
    while previous != callee:
        previous, callee = callee, _ARGUMENTS.sub("", callee)
    return callee.split("(", 1)[0].strip(" .:")


def go_receiver(node: Any) -> str | None:
    """Go: the type a method declaration's receiver names."""
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return None
    for identifier in descendants(receiver, {"type_identifier"}):
        return text(identifier)
    return None


def definition_start(node: Any) -> Any:
    """The node whose first line is the definition's: with its decorators, `export`, or `const f = …`."""
    start = node.parent if node.parent is not None and node.parent.type in (
        "decorated_definition", "export_statement") else node
    if node.type == "variable_declarator" and node.parent is not None:
        start = node.parent.parent if node.parent.parent is not None and \
            node.parent.parent.type == "export_statement" else node.parent
    return start


def is_function_value(node: Any) -> bool:
    """JavaScript / TypeScript: a declarator whose value is a function (`const f = () => …`)."""
    value = node.child_by_field_name("value")
    return value is not None and value.type in ("arrow_function", "function_expression", "function")
