"""infra/scripts/check_commit_subjects.py (run by `make lint`): subjects after the base commit stay <= 72 characters,
earlier history is not judged, and a shallow clone or a tree without git history does not break the lint."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "infra" / "scripts"))
import check_commit_subjects as check

BASE = check.DEFAULT_BASE
LONG = ("docs: " + "a subject that goes on and on " * 4).strip()  # 125 characters
GIT_ENVIRONMENT = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
                   "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull,
                   "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str, **environment: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENVIRONMENT, **environment}).stdout


def commit(repo: Path, message: str) -> None:
    git(repo, "commit", "-q", "--allow-empty", "-m", message)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Old history with a long subject, then the base, then one short subject."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    commit(path, LONG)
    commit(path, "an old short one")
    commit(path, BASE)
    commit(path, "Add a short subject")
    return path


def run(repo: Path, *args: str) -> int:
    return check.main(["--repo", str(repo), *args])


def test_history_before_the_base_is_not_judged(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(repo) == 0
    assert "1 checked" in capsys.readouterr().out


def test_a_long_subject_after_the_base_fails(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    commit(repo, LONG)
    commit(repo, "x" * 72)  # exactly the limit passes
    assert run(repo) == 1
    out = capsys.readouterr().out
    assert f"subject of {len(LONG)} characters" in out and "1 of 3 commit subjects" in out
    assert "x" * 72 not in out


def test_a_first_paragraph_wrapped_over_two_lines_counts_as_one_subject(repo: Path) -> None:
    commit(repo, "a first line of forty characters or so..\nand its continuation without a blank line\n\nbody")
    assert run(repo) == 1


def test_the_body_may_be_long(repo: Path) -> None:
    commit(repo, "Short subject\n\n" + LONG * 3)
    assert run(repo) == 0


def test_a_commit_merged_from_a_branch_after_the_base_is_checked(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "topic")
    commit(repo, LONG)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge topic", "topic")
    assert run(repo) == 1


def test_the_base_is_found_by_its_subject_after_a_rebase_rewrote_it(repo: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    old_base = git(repo, "rev-parse", "HEAD~1").strip()
    git(repo, "commit", "-q", "--amend", "--allow-empty", "-m", "Add a short subject (amended)")
    git(repo, "rebase", "-q", "--root", "--force-rebase", GIT_COMMITTER_DATE="2030-01-01T00:00:00Z")
    assert git(repo, "rev-parse", "HEAD~1").strip() != old_base
    assert run(repo) == 0
    assert "1 checked" in capsys.readouterr().out
    assert run(repo, "--base", LONG) == 0  # another base, by subject: the base itself is not checked
    assert "3 checked" in capsys.readouterr().out
    assert run(repo, "--base", "HEAD~2") == 0  # or by revision
    assert "2 checked" in capsys.readouterr().out


def test_a_shallow_clone_without_the_base_checks_the_commits_it_has(repo: Path, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    commit(repo, "Another short subject")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{repo}", str(shallow))
    assert run(shallow) == 0
    assert "2 checked, every commit of this shallow clone" in capsys.readouterr().out
    commit(repo, LONG)
    git(shallow, "pull", "-q", "--depth", "2")
    assert run(shallow) == 1


def test_a_full_history_without_the_base_is_an_error(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    commit(tmp_path, "short")
    with pytest.raises(SystemExit, match="no commit"):
        run(tmp_path)


def test_no_git_history_is_nothing_to_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path) == 0  # an exported tree: not a repository
    git(tmp_path, "init", "-q")
    assert run(tmp_path) == 0  # a repository without commits
    assert "no git history to check" in capsys.readouterr().out


def test_make_lint_runs_the_check() -> None:
    lint = (REPO_ROOT / "Makefile").read_text(encoding="utf-8").split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "infra/scripts/check_commit_subjects.py" in lint
