"""docs/testing.md's test counts match the suite (issue 37: it said ~1,330 when there were ~3,500).

The count outside tests/e2e comes from this very session when it collected the whole suite (as `make test` does):
free. Run on its own (or with -k), the test collects the suite in a subprocess (about 20 s). tests/e2e, which
`make test` runs in a session of its own, is always collected in a subprocess (a few seconds)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO_ROOT

TESTING_DOC = REPO_ROOT / "docs/testing.md"
TESTS = REPO_ROOT / "tests"
E2E = TESTS / "e2e"
TOLERANCE = 0.10
FIGURE = re.compile(r"~(?P<total>[\d,]+) tests \((?P<e2e>[\d,]+) of them in `tests/e2e`")
COLLECTED = re.compile(r"^(\d+) tests? collected", re.MULTILINE)


def documented() -> tuple[int, int]:
    match = FIGURE.search(TESTING_DOC.read_text(encoding="utf-8"))
    assert match, f"docs/testing.md states no figure like {FIGURE.pattern!r}"
    return int(match["total"].replace(",", "")), int(match["e2e"].replace(",", ""))


def collect(*arguments: str) -> int:
    # A dead OPENSEARCH_URL: collecting must not start the OpenSearch test node.
    environment = {**os.environ, "OPENSEARCH_URL": "http://127.0.0.1:9", "PYTHONPATH": str(REPO_ROOT / "shared")}
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider", *arguments]
    result = subprocess.run(command, cwd=REPO_ROOT, env=environment, capture_output=True, text=True, timeout=300)
    found = COLLECTED.findall(result.stdout + result.stderr)
    assert found, result.stdout[-2000:] + result.stderr[-2000:]
    return int(found[-1])


def folders_with_tests(exclude: Path) -> set[Path]:
    return {path.parent for path in TESTS.rglob("test_*.py") if exclude not in path.parents}


def whole_suite_collected(session: pytest.Session) -> bool:
    """Whether this session collected every test outside tests/e2e: no -k/-m, every test folder represented."""
    option = session.config.option
    if getattr(option, "keyword", "") or getattr(option, "markexpr", "") or getattr(option, "deselect", None):
        return False
    seen = {Path(str(item.path)).parent for item in session.items}
    return folders_with_tests(exclude=E2E) <= seen


def test_the_documented_test_counts_are_within_ten_percent(request: pytest.FixtureRequest) -> None:
    total, e2e = documented()
    session = request.session
    outside_e2e = (sum(1 for item in session.items if E2E not in Path(str(item.path)).parents)
                   if whole_suite_collected(session) else collect("--ignore", str(E2E)))
    counted_e2e = collect(str(E2E))

    assert abs(total - (outside_e2e + counted_e2e)) <= TOLERANCE * (outside_e2e + counted_e2e), (
        f"docs/testing.md says ~{total:,} tests; the suite has {outside_e2e + counted_e2e:,}")
    assert abs(e2e - counted_e2e) <= max(TOLERANCE * counted_e2e, 2), (
        f"docs/testing.md says {e2e} in tests/e2e; there are {counted_e2e}")
