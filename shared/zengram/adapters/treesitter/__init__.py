"""The `CodeParser` port on tree-sitter, with the grammar wheels from PyPI (tree-sitter-python, -javascript,
-typescript, -go, -java, -rust). Grammars load on first use of their language.

One walker (walker.py) serves every language: a table (languages.py) says which node types define classes and
functions, which are calls (and which field holds the callee), imports and inheritance; relations.py reads what
imports and class headings name, nodes.py the nodes themselves; parser.py is the port's adapter.
"""

from zengram.adapters.treesitter.languages import available
from zengram.adapters.treesitter.nodes import MAX_TARGET_CHARS
from zengram.adapters.treesitter.parser import TreeSitterCodeParser

__all__ = ["MAX_TARGET_CHARS", "TreeSitterCodeParser", "available"]
