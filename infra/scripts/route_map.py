"""Writes the route map into docs/architecture.md: for each route the embedded app serves (the /kb app's too), the
function that answers it and the service methods that function calls.

Run: .venv/bin/python infra/scripts/route_map.py          rewrites the table between the markers
     .venv/bin/python infra/scripts/route_map.py --check  exits 1 when the committed table is not the generated one

How a route's service methods are found, without running it: FastAPI's own record of the endpoint's dependencies
names each parameter's provider function (`memories: MemoryServiceDep` → `get_memory_service`), whose return
annotation names the service class (`MemoryService`, imported under TYPE_CHECKING in the deps module: read from
that module's imports). In the endpoint's source, every `memories.store` (or `chat.completions.prepare`, following
the class's annotated attributes) that names a method of a class in a `services` package is listed, and so is what
the module's own helpers do with a service the endpoint hands them (`_enqueue(indexing, …)`).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import re
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from fastapi import FastAPI
from starlette.routing import BaseRoute, Mount

REPO_ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = REPO_ROOT / "docs/architecture.md"
START = "<!-- routes:start -->"
END = "<!-- routes:end -->"
METHOD_ORDER = ("GET", "POST", "PUT", "PATCH", "DELETE")
SERVICE_MODULE = re.compile(r"^zengram\.\w+\.services\.")
HELPER_DEPTH = 2


@dataclass(frozen=True)
class Row:
    methods: tuple[str, ...]
    path: str
    endpoint: Callable[..., Any]
    logic: tuple[tuple[type, str], ...]  # (service class, method name), in the order the source names them


def served_routes(app: FastAPI, prefix: str = "") -> Iterator[tuple[str, BaseRoute]]:
    """(full path, route) for every route, in the order the app matches them; mounted FastAPI apps included."""
    for path, route in _flattened(app.routes):
        if isinstance(route, Mount) and isinstance(route.app, FastAPI):
            yield from served_routes(route.app, prefix + route.path)
        else:
            yield prefix + path, route


def _flattened(routes: Sequence[BaseRoute]) -> Iterator[tuple[str, BaseRoute]]:
    """Recent FastAPI keeps an included router as one entry and builds its routes lazily: ask it for them."""
    try:
        from fastapi.routing import iter_route_contexts  # type: ignore[attr-defined,unused-ignore]
    except ImportError:  # an older FastAPI copies the routes into the app
        for route in routes:
            yield str(getattr(route, "path", "")), route
        return
    for context in iter_route_contexts(routes):
        yield str(context.path), context.original_route


def rows(app: FastAPI) -> list[Row]:
    """One row per route with an endpoint of ours; a `/kb` route's trailing-slash twin is left out (the prose
    says every /kb route has one)."""
    found: list[Row] = []
    seen: set[tuple[str, Callable[..., Any]]] = set()
    for path, route in served_routes(app):
        endpoint = getattr(route, "endpoint", None)
        if endpoint is None or not endpoint.__module__.startswith("zengram."):
            continue  # FastAPI's own pages (/kb/docs, /kb/openapi.json) and mounted static files
        if path.endswith("/") and (path.rstrip("/"), endpoint) in seen:
            continue
        seen.add((path, endpoint))
        methods = set(getattr(route, "methods", None) or ())
        ordered = tuple(method for method in METHOD_ORDER if method in methods) or tuple(sorted(methods))
        found.append(Row(ordered, path, endpoint, tuple(service_calls(route, endpoint))))
    return found


# --- which service methods an endpoint calls -------------------------------------------------------------------


def service_calls(route: BaseRoute, endpoint: Callable[..., Any]) -> list[tuple[type, str]]:
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return []
    typed = {dependency.name: kind for dependency in dependant.dependencies
             if dependency.name and dependency.call and (kind := returned_class(dependency.call)) is not None}
    return list(dict.fromkeys(_calls_in(endpoint, typed, HELPER_DEPTH)))


def _calls_in(function: Callable[..., Any], typed: dict[str, type], depth: int) -> Iterator[tuple[type, str]]:
    """(class, method) for each `name.attr….method` in `function` whose `name` is a parameter of a known class,
    then the same inside the module's own helpers `function` hands such a parameter to."""
    if not typed:
        return
    tree = _function_tree(function)
    module = sys.modules[function.__module__]
    for node in sorted(ast.walk(tree), key=lambda node: (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))):
        if isinstance(node, ast.Attribute) and (called := _method_of(node, typed)) is not None:
            yield called
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and depth > 0:
            helper = getattr(module, node.func.id, None)
            if inspect.isfunction(helper) and helper.__module__ == module.__name__ and helper is not function:
                handed = _handed_over(helper, node, typed)
                yield from _calls_in(helper, handed, depth - 1)


def _method_of(node: ast.Attribute, typed: dict[str, type]) -> tuple[type, str] | None:
    names: list[str] = []
    current: ast.expr = node
    while isinstance(current, ast.Attribute):
        names.insert(0, current.attr)
        current = current.value
    if not isinstance(current, ast.Name) or current.id not in typed:
        return None
    kind: type | None = typed[current.id]
    for name in names[:-1]:
        kind = attribute_class(kind, name) if kind is not None else None
    if kind is None or not SERVICE_MODULE.match(kind.__module__):
        return None
    member = inspect.getattr_static(kind, names[-1], None)
    return (kind, names[-1]) if inspect.isfunction(member) else None


def _handed_over(helper: Callable[..., Any], call: ast.Call, typed: dict[str, type]) -> dict[str, type]:
    """The helper's parameters that receive one of the typed names, by position or by keyword."""
    parameters = list(inspect.signature(helper).parameters)
    handed = {parameters[index]: typed[arg.id] for index, arg in enumerate(call.args)
              if isinstance(arg, ast.Name) and arg.id in typed and index < len(parameters)}
    handed |= {keyword.arg: typed[keyword.value.id] for keyword in call.keywords
               if keyword.arg and isinstance(keyword.value, ast.Name) and keyword.value.id in typed}
    return handed


def _function_tree(function: Callable[..., Any]) -> ast.AST:
    return ast.parse(textwrap.dedent(inspect.getsource(function)))


# --- resolving the names annotations use (often imported under TYPE_CHECKING only) ----------------------------


def returned_class(provider: Callable[..., Any]) -> type | None:
    annotation = inspect.get_annotations(provider).get("return")
    return _named_class(sys.modules.get(provider.__module__), annotation)


def attribute_class(kind: type, name: str) -> type | None:
    """The class of `kind().name`: from the class's annotations, or a property's return annotation."""
    for base in kind.__mro__:
        annotation = inspect.get_annotations(base).get(name)
        if annotation is not None:
            return _named_class(sys.modules.get(base.__module__), annotation)
        member = base.__dict__.get(name)
        getter = getattr(member, "fget", None) or getattr(member, "func", None)  # property, cached_property
        if getter is not None:
            return returned_class(getter)
    return None


def _named_class(module: ModuleType | None, annotation: Any) -> type | None:
    if inspect.isclass(annotation):
        return annotation
    if module is None or not isinstance(annotation, str) or not annotation.isidentifier():
        return None  # unions, generics, Annotated…: not a service
    found = getattr(module, annotation, None) or _imported(module, annotation)
    return found if inspect.isclass(found) else None


def _imported(module: ModuleType, name: str) -> Any:
    source = imports_of(module.__name__).get(name)
    if source is None:
        return None
    origin, attribute = source
    return getattr(importlib.import_module(origin), attribute, None)


@cache
def imports_of(module_name: str) -> dict[str, tuple[str, str]]:
    """Every `from x import y as z` of the module, TYPE_CHECKING blocks included: {z: (x, y)}."""
    module = sys.modules[module_name]
    found: dict[str, tuple[str, str]] = {}
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                found[alias.asname or alias.name] = (node.module, alias.name)
    return found


# --- the table -------------------------------------------------------------------------------------------------


def source_file(thing: Any) -> str:
    """The file relative to shared/ (`zengram/memory/api/memory.py`)."""
    path = Path(inspect.getfile(thing)).resolve()
    parts = path.parts
    return "/".join(parts[len(parts) - 1 - parts[::-1].index("zengram"):])


def function_name(function: Callable[..., Any]) -> str:
    return function.__qualname__.replace(".<locals>.", ".")


def logic_cell(logic: Sequence[tuple[type, str]]) -> str:
    by_file: dict[str, list[str]] = {}
    for kind, method in logic:
        by_file.setdefault(source_file(kind), []).append(f"{kind.__name__}.{method}")
    return "; ".join(f"`{file}` {', '.join(f'`{call}`' for call in calls)}" for file, calls in by_file.items()) or "—"


def table(found: Sequence[Row]) -> str:
    lines = ["| route | answered by (`api/`) | logic (`services/`) |", "|---|---|---|"]
    for row in found:
        methods = ", ".join(row.methods)
        lines.append(f"| `{methods} {row.path}` | `{source_file(row.endpoint)}` `{function_name(row.endpoint)}` "
                     f"| {logic_cell(row.logic)} |")
    return "\n".join(lines)


def generated_block(app: FastAPI) -> str:
    note = ("<!-- generated by infra/scripts/route_map.py from the embedded app's routes: do not edit by hand -->\n"
            "Files are relative to `shared/`. Every `/kb` route also answers with a trailing slash.\n"
            "A route with no service (—) keeps its whole logic in its function.\n\n")
    return f"{START}\n{note}{table(rows(app))}\n{END}"


def build_app(folder: Path) -> FastAPI:
    """The embedded app over an empty `folder`. Only its routes are read: the containers are built on first use,
    so nothing is opened or written."""
    from zengram.embedded.app import build_embedded_app
    from zengram.settings import Settings

    return build_embedded_app(Settings(data_dir=folder / "data", api_key="route-map-key-" * 3))


def committed_block(text: str) -> str:
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"{ARCHITECTURE.relative_to(REPO_ROOT)} has no {START} … {END} markers")
    return text[start:end + len(END)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/architecture.md is out of date")
    check = parser.parse_args(argv).check
    text = ARCHITECTURE.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="zengram-route-map-") as folder:
        current, fresh = committed_block(text), generated_block(build_app(Path(folder)))
    if check:
        if current != fresh:
            print("docs/architecture.md's route map is out of date: run infra/scripts/route_map.py", file=sys.stderr)
            return 1
        return 0
    ARCHITECTURE.write_text(text.replace(current, fresh), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
