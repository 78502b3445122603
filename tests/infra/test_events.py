"""events/ is generated: the committed sample events are exactly what infra/scripts/make_events.py writes, byte for
byte, and nothing else (but events/README.md). A sample edited by hand, added by hand or left behind by a renamed one
fails here; change the generator and run it instead (events/README.md)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "infra" / "scripts"))
import make_events

EVENTS = REPO_ROOT / "events"
GENERATOR = REPO_ROOT / "infra" / "scripts" / "make_events.py"


def files_under(directory: Path) -> dict[str, bytes]:
    """Every file under `directory` but the hand-written ones, by path relative to it."""
    return {path.relative_to(directory).as_posix(): path.read_bytes() for path in sorted(directory.rglob("*"))
            if path.is_file() and path.relative_to(directory).as_posix() not in make_events.HAND_WRITTEN}


def differences(directory: Path, expected: dict[str, bytes]) -> list[str]:
    """What `directory` holds that the generator would not write, what it lacks, and what differs."""
    found = files_under(directory)
    return ([f"not generated: {name}" for name in sorted(found.keys() - expected.keys())]
            + [f"missing: {name}" for name in sorted(expected.keys() - found.keys())]
            + [f"edited: {name}" for name in sorted(found.keys() & expected.keys()) if found[name] != expected[name]])


def regenerated(target: Path, hash_seed: str) -> dict[str, bytes]:
    """Run the generator as a developer would, in a fresh interpreter, into `target`."""
    environment = {**os.environ, "PYTHONHASHSEED": hash_seed}
    subprocess.run([sys.executable, str(GENERATOR), str(target)], check=True, capture_output=True, env=environment)
    return files_under(target)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    return regenerated(tmp_path_factory.mktemp("events"), "0")


def test_the_committed_events_are_exactly_the_generated_ones(generated: dict[str, bytes]) -> None:
    assert len(generated) >= 80  # the generator really wrote the samples (86 when this test was written)
    assert differences(EVENTS, generated) == [], "run infra/scripts/make_events.py (events/README.md)"


def test_the_generator_writes_the_same_bytes_every_time(tmp_path: Path, generated: dict[str, bytes]) -> None:
    assert regenerated(tmp_path, "12345") == generated
    assert {name: text.encode() for name, text in make_events.render().items()} == generated


def test_every_function_with_sample_events_gets_them_from_the_generator(generated: dict[str, bytes]) -> None:
    committed_groups = {path.name for path in EVENTS.iterdir() if path.is_dir()}
    assert committed_groups == {name.split("/")[0] for name in generated}


def test_a_hand_edit_an_extra_file_and_a_missing_one_are_caught(tmp_path: Path, generated: dict[str, bytes]) -> None:
    copy = tmp_path / "events"
    shutil.copytree(EVENTS, copy)
    assert differences(copy, generated) == []
    edited = copy / "memory" / "post_memory.json"
    edited.write_text(edited.read_text(encoding="utf-8").replace("Next.js 14", "Next.js 15"), encoding="utf-8")
    (copy / "memory" / "post_memory_by_hand.json").write_text("{}\n", encoding="utf-8")
    (copy / "health" / "get_health.json").unlink()
    whitespace_only = copy / "admin" / "list_keys.json"
    whitespace_only.write_text(whitespace_only.read_text(encoding="utf-8").replace("  ", "\t"), encoding="utf-8")
    assert differences(copy, generated) == ["not generated: memory/post_memory_by_hand.json",
                                            "missing: health/get_health.json",
                                            "edited: admin/list_keys.json", "edited: memory/post_memory.json"]


def test_regenerating_removes_stale_samples_and_keeps_the_readme(tmp_path: Path, generated: dict[str, bytes]) -> None:
    target = tmp_path / "events"
    (target / "chat").mkdir(parents=True)
    (target / "chat" / "renamed_long_ago.json").write_text("{}\n", encoding="utf-8")
    (target / "gone").mkdir()
    (target / "gone" / "old.json").write_text("{}\n", encoding="utf-8")
    (target / "README.md").write_text("# Sample events\n", encoding="utf-8")
    assert regenerated(target, "1") == generated
    assert not (target / "gone").exists()
    assert (target / "README.md").read_text(encoding="utf-8") == "# Sample events\n"
