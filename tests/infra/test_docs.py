"""The documentation stays a front door: a short README, links that resolve, settings and routes that match the
code, every cited document inside the repository, and no absolute path to the shared folder beside it."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi import FastAPI
from pydantic import AliasChoices
from starlette.routing import Mount
from zengram.assembly.containers import Container
from zengram.documents.api import app as kb
from zengram.embedded.app import build_embedded_app
from zengram.settings import Settings

from tests.support import REPO_ROOT

THIS_FILE = Path(__file__).resolve()
README = REPO_ROOT / "README.md"
DOCS = REPO_ROOT / "docs"
SETTINGS_DOC = DOCS / "settings.md"
README_LIMIT = 10 * 1024
# The heading in settings.md after which variables are read by the clients or the AWS SDK, not by `Settings`.
NOT_SETTINGS_HEADING = "not by `Settings`"

FENCED_CODE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
ENV_NAME = re.compile(r"`([A-Z][A-Z0-9_]*)`")
CITED_DOCUMENT = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.md)\b")


def repository_files() -> list[Path]:
    """Tracked and new (not ignored) files: what a fresh clone of this branch would hold."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                            cwd=REPO_ROOT, capture_output=True, check=True).stdout.decode()
    return [REPO_ROOT / name for name in listed.split("\0") if name and (REPO_ROOT / name).is_file()]


def documentation() -> list[Path]:
    """README.md and every Markdown file of docs/, bench/, infra/ and tests/."""
    roots = ("docs/", "bench/", "infra/", "tests/")
    found = [path for path in repository_files() if path.suffix == ".md"
             and path.relative_to(REPO_ROOT).as_posix().startswith(roots)]
    return [README, *sorted(found)]


def prose(markdown: str) -> str:
    """The text without code blocks and code spans, where brackets and parentheses are not links."""
    return INLINE_CODE.sub("", FENCED_CODE.sub("", markdown))


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: the rendered text, lower-cased, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(FENCED_CODE.sub("", markdown)):
        slug = anchor(heading)
        found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return found


def broken_links(document: Path) -> Iterator[str]:
    text = document.read_text(encoding="utf-8")
    for target in LINK.findall(prose(text)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: …
            continue
        path_part, _, fragment = target.partition("#")
        linked = (document.parent / path_part).resolve() if path_part else document
        if not linked.exists():
            yield f"{target} (no such file)"
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked.read_text(encoding="utf-8")):
            yield f"{target} (no heading #{fragment})"


# A path in a code span that names a place in the repository, or in the project's shared folder beside it.
REPOSITORY_PATH = re.compile(r"`((?:\.\./)?(?:shared|tests|bench|docs|infra|functions|events|\.ci)/[^`\s]*)`")
# Beside the repository on purpose: evaluation data that is never copied in (bench/recall/data.py reads it).
BESIDE_THE_REPOSITORY = ("../shared/data/",)


def missing_paths(document: Path) -> Iterator[str]:
    """Repository paths written as code (`shared/zengram/…`, `docs/…`, `../shared/spec/…`) that a fresh clone lacks
    (a module may be named without `.py`). A `../` path is beside the repository, which a clone never has: only
    the evaluation data may be named there (BESIDE_THE_REPOSITORY)."""
    text = FENCED_CODE.sub("", document.read_text(encoding="utf-8"))
    for written in REPOSITORY_PATH.findall(text):
        path = re.split(r"[#:]", written.rstrip(".,;"))[0]
        if any(mark in path for mark in "*{}<>$…") or path.startswith(BESIDE_THE_REPOSITORY):
            continue
        if path.startswith("../"):  # beside the repository: not in a clone, whatever this machine has there
            yield written
            continue
        target = (REPO_ROOT / path).resolve()
        if not target.exists() and not target.with_suffix(".py").exists() and not ignored_by_git(path):
            yield written


def ignored_by_git(path: str) -> bool:
    """Build output the docs point at (`infra/opensearch-node/target/`): not in a clone until built."""
    return any(subprocess.run(["git", "check-ignore", "-q", candidate], cwd=REPO_ROOT, check=False).returncode == 0
               for candidate in (path, f"{path.rstrip('/')}/"))  # a folder's pattern (`bench/.data/`) too


# docs/spec/ holds upstream documents as they are: the paths they name are upstream's.
OWN_DOCUMENTS = [path for path in documentation() if not path.is_relative_to(DOCS / "spec")]


@pytest.mark.parametrize("document", OWN_DOCUMENTS, ids=lambda path: path.relative_to(REPO_ROOT).as_posix())
def test_every_path_written_as_code_exists(document: Path) -> None:
    """Issue 37: docs/chat.md named `../shared/spec/mnexium-concepts.md`, which a fresh clone does not have (the
    spec's copy is docs/spec/); the link check skips code spans, so this checks them."""
    assert list(missing_paths(document)) == []


def test_the_path_check_catches_a_missing_path(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("`docs/chat.md` `../shared/spec/semantics.md` `docs/spec/semantics.md#ranking` "
                    "`shared/zengram/gone.py` `../shared/data/locomo/` `functions/<group>/app.py`\n", encoding="utf-8")
    assert list(missing_paths(page)) == ["../shared/spec/semantics.md", "shared/zengram/gone.py"]


def test_the_readme_stays_a_front_door() -> None:
    size = len(README.read_bytes())
    assert size < README_LIMIT, f"README.md is {size:,} bytes: move sections into docs/ and link them"


@pytest.mark.parametrize("document", documentation(), ids=lambda path: path.relative_to(REPO_ROOT).as_posix())
def test_every_relative_link_resolves(document: Path) -> None:
    assert list(broken_links(document)) == []


def test_the_link_check_catches_a_broken_link(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other\n\n## A section\n", encoding="utf-8")
    page.write_text("[ok](other.md#a-section) [gone](missing.md) [no heading](other.md#nothing) "
                    "`[code](missing.md)` [web](https://example.com) [self](#top)\n\n# Top\n", encoding="utf-8")
    assert list(broken_links(page)) == ["missing.md (no such file)", "other.md#nothing (no heading #nothing)"]


def test_anchors_follow_github() -> None:
    assert anchors("## Status codes and the OpenAPI document\n## `/stats` counts\n## A\n## A\n") == {
        "status-codes-and-the-openapi-document", "stats-counts", "a", "a-1"}


# --- settings.md against Settings ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DocumentedVariable:
    names: tuple[str, ...]
    default: str
    is_setting: bool  # above the NOT_SETTINGS_HEADING


def documented_variables() -> list[DocumentedVariable]:
    found = []
    is_setting = True
    for line in SETTINGS_DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") and NOT_SETTINGS_HEADING in line:
            is_setting = False
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")] if line.startswith("| `") else []
        if len(cells) >= 3:
            found.append(DocumentedVariable(tuple(ENV_NAME.findall(cells[0])), cells[1], is_setting))
    return found


def environment_names(field_name: str) -> tuple[str, ...]:
    """The variables a `Settings` field is read from, in pydantic-settings' order."""
    alias = Settings.model_fields[field_name].validation_alias
    if isinstance(alias, AliasChoices):
        return tuple(choice for choice in alias.choices if isinstance(choice, str))
    if isinstance(alias, str):
        return (alias,)
    return (f"{Settings.model_config.get('env_prefix', '')}{field_name}".upper(),)


def field_of(name: str) -> str:
    """The field a row documents, named by the row's first variable (OPENAI_API_KEY is also an LLM key alias)."""
    fields = sorted(Settings.model_fields, key=lambda field: environment_names(field)[0] != name)
    return next(field for field in fields if name in environment_names(field))


def test_every_setting_is_documented_with_every_name() -> None:
    documented = {name for variable in documented_variables() if variable.is_setting for name in variable.names}
    missing = {field: names for field in Settings.model_fields
               if not set(names := environment_names(field)) <= documented}
    assert missing == {}, "add these to docs/settings.md"


def test_every_documented_setting_exists() -> None:
    known = {name for field in Settings.model_fields for name in environment_names(field)}
    documented = {name for variable in documented_variables() if variable.is_setting for name in variable.names}
    assert documented - known == set(), "docs/settings.md names variables Settings does not read"


def test_each_row_documents_one_setting() -> None:
    for variable in documented_variables():
        if variable.is_setting:
            assert variable.names, "a settings row without a variable"
            assert set(variable.names) <= set(environment_names(field_of(variable.names[0]))), variable.names


def written(default: object) -> str:
    """A default as settings.md writes it: `true`, `60` for 60.0, the path or text as is."""
    if isinstance(default, bool):
        return str(default).lower()
    if isinstance(default, float) and default.is_integer():
        return str(int(default))
    return str(default)


def test_documented_defaults_are_the_settings_defaults() -> None:
    checked = 0
    for variable in documented_variables():
        if not variable.is_setting:
            continue
        default = Settings.model_fields[field_of(variable.names[0])].default
        if variable.default == "—":
            assert default is None, variable.names
        elif re.fullmatch(r"`[^`]+`", variable.default):
            assert variable.default.strip("`") == written(default), variable.names
            checked += 1
    assert checked > 50  # most rows state their default literally, so this test has teeth


def test_variables_outside_settings_are_read_by_the_code() -> None:
    code = "\n".join(path.read_text(encoding="utf-8") for path in repository_files()
                     if path.suffix == ".py" and path.relative_to(REPO_ROOT).parts[0] in {"shared", "bench"})
    others = {name for variable in documented_variables() if not variable.is_setting for name in variable.names}
    assert others, "the table of variables read outside Settings is gone"
    assert {name for name in others if name not in code} == set()


# --- routes ------------------------------------------------------------------------------------------------


def normalised_path(path: str) -> str:
    return re.sub(r"\{[^}]*\}", "{}", path)


def test_every_route_is_documented(client_routes: list[str]) -> None:
    """The memory API in docs/api/ (and keys.md); the chat layer (/api/v1) in chat.md; the document knowledge base,
    mounted at /kb, in documents.md, whose route table names each path without the prefix (as the Agent Brain API
    does) or with it."""
    pages = [*sorted((DOCS / "api").glob("*.md")), DOCS / "keys.md"]
    pages.append(DOCS / "chat.md")
    text = normalised_path("\n".join(page.read_text(encoding="utf-8") for page in pages))
    documents = normalised_path((DOCS / "documents.md").read_text(encoding="utf-8"))
    undocumented = [path for path in client_routes
                    if not re.search(re.escape(normalised_path(path)) + r"(?![\w/])", text)
                    and not (path.startswith(f"{kb.BASE_PATH}/") and re.search(
                        re.escape(normalised_path(path.removeprefix(kb.BASE_PATH))) + r"(?![\w/])", documents))]
    assert undocumented == [], ("document these routes in docs/api/ (the /api/v1 routes in docs/chat.md, the /kb "
                                "routes in docs/documents.md)")


@pytest.fixture
def client_routes(settings: Settings, hashing_container: Container) -> list[str]:
    """Every path the embedded app serves, the mounted document knowledge base's included (the Lambda functions
    serve the same routers)."""
    app = build_embedded_app(settings, hashing_container)
    paths = set(app.openapi()["paths"])
    for route in app.routes:
        if isinstance(route, Mount) and isinstance(route.app, FastAPI):
            paths |= {f"{route.path}{path}" for path in route.app.openapi()["paths"]}
    assert {"/memory/{memory_id}/restore", "/kb/index/jobs/{job_id}"} <= paths  # the list is real
    return sorted(paths)


# --- everything cited is inside the repository -------------------------------------------------------------


def cited_documents() -> Iterator[tuple[Path, str]]:
    """(file, name) for every `*.md` the code, tests, scripts and templates mention. In tests, a bare file name that
    only ever opens a string (`"guide.md"`) is a file the test writes or reads, not a citation."""
    kinds = {".py", ".yaml", ".yml", ".json", ".toml", ".sh"}
    for path in repository_files():
        if path == THIS_FILE or not (path.suffix in kinds or path.name in {"Makefile", "run"}):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        in_tests = path.relative_to(REPO_ROOT).parts[0] == "tests"
        for name in CITED_DOCUMENT.findall(text):
            if in_tests and "/" not in name and text.count(name) == text.count(f'"{name}'):
                continue
            yield path, name


def resolves(citing: Path, name: str) -> bool:
    candidates = [REPO_ROOT / name, citing.parent / name, DOCS / "spec" / name]
    return any(candidate.is_file() for candidate in candidates)


def test_every_document_the_code_cites_is_in_the_repository() -> None:
    cited = list(cited_documents())
    assert any(name == "semantics.md" for _, name in cited)  # the scan sees the citations it guards
    missing = sorted({f"{path.relative_to(REPO_ROOT)}: {name}" for path, name in cited if not resolves(path, name)})
    assert missing == []


SHARED_FOLDER_IN_CODE = re.compile(r"\.\./shared|parents?(?:\[\d\])?\s*/\s*[\"']shared[\"']\s*/\s*[\"']data")


def test_nothing_points_at_the_shared_folder_by_absolute_path() -> None:
    hits = [str(path.relative_to(REPO_ROOT)) for path in repository_files()
            if path != THIS_FILE and "/work/" in path.read_text(encoding="utf-8", errors="replace")]
    assert hits == []


def test_only_the_benchmark_data_loader_looks_beside_the_repository() -> None:
    """The LoCoMo data stays outside the repository (CC BY-NC 4.0); everything else the code reads is inside."""
    readers = sorted(str(path.relative_to(REPO_ROOT)) for path in repository_files()
                     if path.suffix == ".py" and path != THIS_FILE
                     and SHARED_FOLDER_IN_CODE.search(path.read_text(encoding="utf-8")))
    assert readers == ["bench/recall/data.py", "tests/unit/test_recall_data.py"]  # the loader and its test
