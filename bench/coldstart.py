"""`make bench-coldstart`: import time of each function module in a fresh interpreter, as Lambda's init does.

With the layer built by `make package` and a local python3.13, each function is imported exactly as the
runtime would (layer on sys.path, function folder as the code root, precompiled bytecode). Otherwise the dev
venv's interpreter is used and the report says so. Figures are medians over repeated fresh processes, minus
the same interpreter starting with nothing to import.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYER_SITE = ROOT / "build" / "layer" / "python"
TARGET_MS = 300.0
FUNCTIONS = sorted(path.name for path in (ROOT / "functions").iterdir() if (path / "app.py").is_file())


RUNTIME_PACKAGES = ("boto3", "botocore", "s3transfer")  # what the Lambda runtime itself provides


def runtime_interpreter() -> str | None:
    """The real path of a local python3.13 (not a pyenv shim, whose start-up would be measured too)."""
    probe = subprocess.run(["env", "PYENV_VERSION=3.13.0", "python3.13", "-c", "import sys; print(sys.executable)"],
                           capture_output=True, text=True, check=False)
    return probe.stdout.strip() if probe.returncode == 0 else None


def runtime_site() -> Path:
    """A folder holding only the runtime-provided packages (linked from the dev venv), like /var/runtime."""
    folder = ROOT / "build" / "runtime-site"
    folder.mkdir(parents=True, exist_ok=True)
    venv_site = next((ROOT / ".venv" / "lib").glob("python3*/site-packages"))
    for name in RUNTIME_PACKAGES:
        link = folder / name
        if not link.exists():
            link.symlink_to(venv_site / name)
    return folder


def interpreter() -> tuple[list[str], dict[str, str], str]:
    """The command, environment and a description of what is measured."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.update({"POWERTOOLS_TRACE_DISABLED": "false", "AWS_REGION": "eu-west-1", "AWS_LAMBDA_FUNCTION_NAME": "x"})
    python = runtime_interpreter()
    if LAYER_SITE.is_dir() and python:
        env["ZENGRAM_BENCH_EXTRA_PATH"] = os.pathsep.join([str(LAYER_SITE), str(runtime_site())])
        return [python], env, "python3.13 + the packaged layer (build/layer), as on Lambda"
    return [str(ROOT / ".venv" / "bin" / "python")], env, "dev venv python (run `make package` for the layer)"


def time_import(command: list[str], env: dict[str, str], code_root: Path | None, statement: str) -> float:
    path_entries = [str(code_root)] if code_root else []
    if env.get("ZENGRAM_BENCH_EXTRA_PATH"):
        path_entries.append(env["ZENGRAM_BENCH_EXTRA_PATH"])
    run_env = {**env, "PYTHONPATH": os.pathsep.join(path_entries)}
    started = time.perf_counter()
    subprocess.run([*command, "-c", statement], env=run_env, check=True)
    return (time.perf_counter() - started) * 1000


def median_ms(command: list[str], env: dict[str, str], code_root: Path | None, statement: str, runs: int) -> float:
    time_import(command, env, code_root, statement)  # first run warms the OS file cache
    return statistics.median(time_import(command, env, code_root, statement) for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    command, env, description = interpreter()
    print(f"cold start: {description}; median of {args.runs} fresh processes; load {os.getloadavg()[0]:.2f}")
    bare = median_ms(command, env, None, "pass", args.runs)
    print(f"  bare interpreter           {bare:7.1f} ms")
    for name in FUNCTIONS:
        total = median_ms(command, env, ROOT / "functions" / name, "import app", args.runs)
        above = total - bare
        verdict = "OK" if above <= TARGET_MS else f"over the {TARGET_MS:.0f} ms target"
        print(f"  functions/{name:<15} {total:7.1f} ms  ({above:6.1f} ms above bare: {verdict})")


if __name__ == "__main__":
    main()
