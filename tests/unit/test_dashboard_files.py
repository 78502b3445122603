"""The dashboard's static files hold together without a build step or a CDN: the import map names vendored files
(each with its license), every module import resolves, the Content-Security-Policy allows exactly the inline
import map, and the package ships every file."""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import re
import tomllib
from pathlib import Path

from zengram.embedded.dashboard import DASHBOARD_FILES

ROOT = Path(__file__).resolve().parents[2]
INDEX = (DASHBOARD_FILES / "index.html").read_text()
IMPORT_MAP = re.search(r'<script type="importmap">(.*?)</script>', INDEX, re.S)
IMPORT = re.compile(r'^\s*import\s+(?:[\w{}\s,*]+\s+from\s+)?"([^"]+)";', re.M)


def import_map() -> dict[str, str]:
    assert IMPORT_MAP is not None
    imports: dict[str, str] = json.loads(IMPORT_MAP.group(1))["imports"]
    return imports


def test_the_import_map_names_vendored_files_each_with_its_license() -> None:
    vendor = DASHBOARD_FILES / "vendor"
    readme = (vendor / "README.md").read_text()
    for target in import_map().values():
        path = (DASHBOARD_FILES / target).resolve()
        assert path.is_file() and path.is_relative_to(vendor), target
        folder = path.relative_to(vendor).parts[0]
        assert (vendor / folder / "LICENSE").is_file(), folder
        name, version = folder.rsplit("-", 1)
        assert f"| {name} | {version} |" in readme, folder


def test_every_module_import_resolves() -> None:
    bare = set(import_map())
    modules = sorted((DASHBOARD_FILES / "js").rglob("*.js"))
    specifiers = {module: IMPORT.findall(module.read_text()) for module in modules}
    assert len(modules) >= 12 and sum(map(len, specifiers.values())) >= 40
    for module, found in specifiers.items():
        for specifier in found:
            if specifier.startswith("."):
                assert (module.parent / specifier).resolve().is_file(), f"{module.name}: {specifier}"
            else:
                assert specifier in bare, f"{module.name}: {specifier} is not in the import map"


def test_the_page_loads_nothing_from_elsewhere() -> None:
    for attribute in re.findall(r'(?:src|href)="([^"]*)"', INDEX):
        assert not re.match(r"^(?:[a-z]+:)?//", attribute), attribute
    for target in import_map().values():
        assert target.startswith("./vendor/"), target


def test_the_content_security_policy_allows_exactly_the_inline_import_map() -> None:
    assert IMPORT_MAP is not None
    digest = base64.b64encode(hashlib.sha256(IMPORT_MAP.group(1).encode()).digest()).decode()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', INDEX)
    assert policy is not None
    script_src = next(part for part in policy.group(1).split(";") if part.strip().startswith("script-src"))
    assert script_src.split() == ["script-src", "'self'", f"'sha256-{digest}'"]
    assert INDEX.count("<script") == 2  # the import map and the one module: no other inline script


def test_the_package_ships_every_dashboard_file() -> None:
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["zengram"]
    package = DASHBOARD_FILES.parent
    for path in DASHBOARD_FILES.rglob("*"):
        if path.is_file():
            relative = path.relative_to(package).as_posix()
            assert any(fnmatch.fnmatch(relative, pattern) and relative.count("/") == pattern.count("/")
                       for pattern in patterns), relative
