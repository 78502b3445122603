"""Fails when a commit subject after the base commit runs past 72 characters (`make lint` runs it).

    python infra/scripts/check_commit_subjects.py [--base REVISION_OR_SUBJECT] [--limit 72] [--repo PATH]

The rule holds from the commit "Remove a py-spy wheel committed by accident; ignore *.whl" on: the commits that
descend from it (`git rev-list --ancestry-path BASE..HEAD`) are checked, earlier history is not. The base is found by
its subject, so a rebase that rewrites its hash does not lose it; `--base` takes a revision or another subject.
A subject is what `git log --format=%s` prints: the first paragraph of the message on one line, so a first paragraph
wrapped over two lines counts as one long subject. Put the why in the body, after a blank line.

A fresh clone may not hold the base: a shallow clone (`--depth`) cut after it holds only commits that descend from
it, so all of those are checked; outside a git repository there is nothing to check.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_BASE = "Remove a py-spy wheel committed by accident; ignore *.whl"
LIMIT = 72
REPO_ROOT = Path(__file__).resolve().parents[2]


class NoHistory(Exception):
    """Not a git repository, or one without commits."""


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str


def git(repo: Path, *args: str) -> str:
    result = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, encoding="utf-8")
    if result.returncode != 0:
        raise NoHistory(result.stderr.strip() or f"git {' '.join(args)} failed")
    return result.stdout


def commits(repo: Path, *selection: str) -> list[Commit]:
    listed = git(repo, "log", "--format=%H%x00%s%x00", *selection)
    fields = listed.split("\x00")
    return [Commit(sha.strip(), subject) for sha, subject in zip(fields[0::2], fields[1::2], strict=False)
            if sha.strip()]


def find_base(repo: Path, base: str) -> str | None:
    """The commit `base` names: a revision, else the newest commit on HEAD's history with that exact subject."""
    try:
        return git(repo, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}").strip()
    except NoHistory:
        pass
    return next((commit.sha for commit in commits(repo, "HEAD") if commit.subject == base), None)


def is_shallow(repo: Path) -> bool:
    return git(repo, "rev-parse", "--is-shallow-repository").strip() == "true"


def commits_to_check(repo: Path, base: str) -> tuple[list[Commit], str]:
    """The commits after the base, and a sentence saying which those are."""
    git(repo, "rev-parse", "--verify", "HEAD^{commit}")  # NoHistory without a commit
    found = find_base(repo, base)
    if found:
        return commits(repo, "--ancestry-path", f"{found}..HEAD"), f"after {found[:12]} ({base})"
    if is_shallow(repo):
        return commits(repo, "HEAD"), f"every commit of this shallow clone (the base, {base!r}, is not in it)"
    raise SystemExit(f"check_commit_subjects: no commit {base!r} in the history of HEAD (pass --base)")


def too_long(checked: Sequence[Commit], limit: int) -> list[Commit]:
    return [commit for commit in checked if len(commit.subject) > limit]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default=DEFAULT_BASE, help="a revision or an exact subject (default: %(default)r)")
    parser.add_argument("--limit", type=int, default=LIMIT, help="most characters in a subject (default: %(default)s)")
    parser.add_argument("--repo", type=Path, default=REPO_ROOT, help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    try:
        checked, which = commits_to_check(arguments.repo, arguments.base)
    except NoHistory as error:
        print(f"check_commit_subjects: no git history to check ({error})")
        return 0
    offending = too_long(checked, arguments.limit)
    for commit in offending:
        print(f"{commit.sha[:12]}: subject of {len(commit.subject)} characters (limit {arguments.limit}): "
              f"{commit.subject}")
    if offending:
        print(f"{len(offending)} of {len(checked)} commit subjects {which} exceed {arguments.limit} characters: "
              "shorten them (git rebase -i, reword) and put the details in the body")
        return 1
    print(f"commit subjects: {len(checked)} checked, {which}, none over {arguments.limit} characters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
