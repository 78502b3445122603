"""The tree-sitter parser: definitions, calls, imports and inheritance in the five languages."""

from __future__ import annotations

import pytest
from zengram.adapters.treesitter import TreeSitterCodeParser
from zengram.documents.domain.models import CodeStructure


@pytest.fixture(scope="module")
def parser() -> TreeSitterCodeParser:
    return TreeSitterCodeParser()


def refs(structure: CodeStructure, kind: str) -> set[tuple[str, str]]:
    return {(ref.source_name, ref.target) for ref in structure.references if ref.type == kind}


def defs(structure: CodeStructure) -> set[tuple[str, str]]:
    return {(d.qualified_name, d.kind) for d in structure.definitions}


def test_python(parser: TreeSitterCodeParser) -> None:
    parsed = parser.parse(
        "from billing import compute_total as ct, Invoice\nimport os.path\n\n@dataclass\nclass Report(Base, "
        "metaclass=M):\n    def total(self):\n        return ct(self.items) + helper()\n\ndef helper():\n"
        "    return Report().total()\n", "python")
    assert defs(parsed) == {("Report", "class"), ("Report.total", "method"), ("helper", "function")}
    assert refs(parsed, "CALLS") == {("Report.total", "ct"), ("Report.total", "helper"), ("helper", "Report.total"),
                                      ("helper", "Report")}
    assert refs(parsed, "IMPORTS") == {("", "billing.compute_total"), ("", "billing.Invoice"), ("", "os.path")}
    assert refs(parsed, "INHERITS") == {("Report", "Base")}
    decorated = next(d for d in parsed.definitions if d.name == "Report")
    assert decorated.start_line == 4  # the decorator belongs to the definition


def test_typescript(parser: TreeSitterCodeParser) -> None:
    parsed = parser.parse(
        "import { formatMoney } from './format';\nexport class Cart extends Base implements Sized {\n"
        "  total(): number { return formatMoney(this.sum()); }\n}\nexport const make = () => new Cart();\n",
        "typescript")
    assert defs(parsed) == {("Cart", "class"), ("Cart.total", "method"), ("make", "function")}
    assert refs(parsed, "CALLS") == {("Cart.total", "formatMoney"), ("Cart.total", "this.sum"), ("make", "Cart")}
    assert refs(parsed, "EXTENDS") == {("Cart", "Base")}
    assert refs(parsed, "INHERITS") == {("Cart", "Sized")}
    assert ("", "formatMoney") in refs(parsed, "IMPORTS")


def test_javascript(parser: TreeSitterCodeParser) -> None:
    parsed = parser.parse("class A extends B { m() { f(); } }\nfunction g() { new A().m(); }\n", "javascript")
    assert defs(parsed) == {("A", "class"), ("A.m", "method"), ("g", "function")}
    assert refs(parsed, "EXTENDS") == {("A", "B")}
    assert ("A.m", "f") in refs(parsed, "CALLS") and ("g", "A") in refs(parsed, "CALLS")


def test_go(parser: TreeSitterCodeParser) -> None:
    parsed = parser.parse('package main\nimport "fmt"\ntype Server struct { Base }\n'
                          'func (s *Server) Start() { fmt.Println(listen()) }\nfunc listen() int { return 1 }\n', "go")
    assert defs(parsed) == {("Server", "class"), ("Server.Start", "method"), ("listen", "function")}
    assert refs(parsed, "CALLS") == {("Server.Start", "fmt.Println"), ("Server.Start", "listen")}
    assert refs(parsed, "IMPORTS") == {("", "fmt")}
    assert refs(parsed, "INHERITS") == {("Server", "Base")}


def test_java(parser: TreeSitterCodeParser) -> None:
    parsed = parser.parse("import java.util.List;\nclass Shop extends Store implements Open {\n"
                          "  Shop() {}\n  void sell() { stock.take(); new Receipt(); }\n}\n", "java")
    assert defs(parsed) == {("Shop", "class"), ("Shop.Shop", "method"), ("Shop.sell", "method")}
    assert refs(parsed, "CALLS") == {("Shop.sell", "stock.take"), ("Shop.sell", "Receipt")}
    assert refs(parsed, "EXTENDS") == {("Shop", "Store")} and refs(parsed, "INHERITS") == {("Shop", "Open")}
    assert refs(parsed, "IMPORTS") == {("", "java.util.List")}


def test_rust(parser: TreeSitterCodeParser) -> None:
    parsed = parser.parse("use std::fmt::Display;\nstruct Point;\nimpl Display for Point {\n"
                          "  fn fmt(&self) { write_out(); self.check(); }\n}\nfn main() { Point::new(); }\n", "rust")
    assert defs(parsed) == {("Point", "class"), ("Point.fmt", "method"), ("main", "function")}
    assert refs(parsed, "CALLS") == {("Point.fmt", "write_out"), ("Point.fmt", "self.check"),
                                      ("main", "Point::new")}
    assert refs(parsed, "INHERITS") == {("Point", "Display")}
    assert ("", "Display") in refs(parsed, "IMPORTS")


def test_broken_code_yields_what_parses(parser: TreeSitterCodeParser) -> None:
    parsed = parser.parse("def ok():\n    pass\n\ndef broken(:\n", "python")
    assert ("ok", "function") in defs(parsed)
