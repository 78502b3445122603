"""`python -m bench.coldstart --import-work`: each subject's import work from `python -X importtime` (one round of
the health function against the bare handler, on the dev venv: about a second). Figures are never asserted."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from bench.coldstart import BASELINE, environment, import_times, interpreter
from tests.support import REPO_ROOT


def test_import_times_reads_every_module_of_a_fresh_import(tmp_path: Path) -> None:
    python, path, _ = interpreter(dev_venv=True)
    selves = import_times(python, environment(path, BASELINE, "http://127.0.0.1:9", tmp_path, "on-demand"))
    assert {"fastapi", "mangum", "app"} <= set(selves)
    assert all(isinstance(micros, int) and micros >= 0 for micros in selves.values())


def test_the_import_work_mode_prints_each_ratio_against_the_target() -> None:
    result = subprocess.run([sys.executable, "-m", "bench.coldstart", "--smoke", "--import-work"], cwd=REPO_ROOT,
                            capture_output=True, text=True, check=False, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "shared")})
    assert result.returncode == 0, result.stderr[-3000:]
    assert re.search(r"least of 1 rounds", result.stdout)
    assert re.search(r"import work \(sum of least self times\).*target <= 1.3x", result.stdout)
    assert re.search(r"bare FastAPI \+ Mangum\s+[\d.]+\s+1.00", result.stdout)
    assert re.search(r"functions/health\s+[\d.]+\s+[\d.]+\s+(OK|over)", result.stdout)
