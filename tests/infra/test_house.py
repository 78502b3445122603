"""The house's size rules (docs/architecture.md): every constructor takes at most 8 parameters, and no module
outside the adapters passes 500 lines. The import rules are import-linter's contracts (`make lint`)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "shared" / "zengram"
MAX_PARAMETERS = 8
MAX_LINES = 500
MODULES = sorted(PACKAGE.rglob("*.py"))


def parameters(function: ast.FunctionDef) -> int:
    """Everything a caller may pass, `self` excluded (a typed **options counts as one)."""
    arguments = function.args
    return (len(arguments.posonlyargs) + len(arguments.args) - 1 + len(arguments.kwonlyargs)
            + (arguments.vararg is not None) + (arguments.kwarg is not None))


def constructors(tree: ast.AST) -> list[tuple[str, ast.FunctionDef]]:
    return [(node.name, item) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
            for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"]


def test_the_rules_see_the_package() -> None:
    assert len(MODULES) > 300
    assert any(constructors(ast.parse(path.read_text())) for path in MODULES)


@pytest.mark.parametrize("path", MODULES, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_no_constructor_takes_more_than_eight_parameters(path: Path) -> None:
    over = {name: parameters(init) for name, init in constructors(ast.parse(path.read_text()))
            if parameters(init) > MAX_PARAMETERS}
    assert over == {}, f"group them into a value object: {over}"


def test_no_module_outside_the_adapters_passes_500_lines() -> None:
    long = {str(path.relative_to(PACKAGE)): lines for path in MODULES if "adapters" not in path.parts
            and (lines := len(path.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_a_long_constructor_is_counted() -> None:
    source = "class A:\n    def __init__(self, a, b, c, d, e, f, g, h, *, i, **more): ...\n"
    [(_, init)] = constructors(ast.parse(source))
    assert parameters(init) == 10
