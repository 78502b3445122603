"""`python -m bench.first_serve`: a newcomer's first `make serve`, timed from a fresh clone (issue #37: ≤ 60 s).

Clones this checkout's HEAD into a temporary folder and runs `make serve` there with a new data folder and a new
model cache (`ZENGRAM_MINILM_CACHE_DIR`), so the virtualenv is created, the dependencies installed and the int8
MiniLM graph built as on a machine that never ran Zengram. Prints the seconds until the install finished (the
venv's stamp file) and until `GET /health` answered, with the date and the load average. pip's own download cache
is used as a returning Python user's would be; `--cold-pip` turns it off (every wheel fetched from the index).
A second `make serve` of the same clone with another new data folder shows a new data folder's start (≤ 3 s).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 60.0
TIMEOUT_SECONDS = 900.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def timed_serve(clone: Path, data_dir: Path, models: Path, environment: dict[str, str]) -> tuple[float, float]:
    """(seconds until the install stamp existed, seconds until /health answered) of one `make serve`."""
    port = free_port()
    env = {**environment, "ZENGRAM_PORT": str(port), "ZENGRAM_HOST": "127.0.0.1",
           "ZENGRAM_DATA_DIR": str(data_dir), "ZENGRAM_MINILM_CACHE_DIR": str(models)}
    stamps = [clone / ".venv" / name for name in (".runtime-installed", ".installed")]
    installed_before = any(stamp.exists() for stamp in stamps)
    log = (data_dir.parent / f"serve-{port}.log").open("w")
    began = time.monotonic()
    server = subprocess.Popen(["make", "serve"], cwd=clone, env=env, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    installed = 0.0 if installed_before else None
    try:
        while time.monotonic() - began < TIMEOUT_SECONDS:
            if installed is None and any(stamp.exists() for stamp in stamps):
                installed = time.monotonic() - began
            if server.poll() is not None:
                raise SystemExit(f"make serve exited {server.returncode}; see {log.name}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1.0).status_code == 200:
                    return installed or 0.0, time.monotonic() - began
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise SystemExit(f"no answer from /health within {TIMEOUT_SECONDS:.0f} s; see {log.name}")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
        log.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cold-pip", action="store_true", help="without pip's download cache")
    parser.add_argument("--keep", action="store_true", help="leave the temporary clone in place")
    arguments = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="zengram-first-serve-"))
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith(("ZENGRAM_", "VIRTUAL_ENV", "PYTHONPATH"))}
    if arguments.cold_pip:
        environment["PIP_NO_CACHE_DIR"] = "1"
    load = ", ".join(f"{figure:.2f}" for figure in os.getloadavg())
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load average {load}, {os.cpu_count()} cores; "
          f"pip cache {'off' if arguments.cold_pip else 'on'}")
    try:
        clone = folder / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        installed, ready = timed_serve(clone, folder / "data-1", folder / "models", environment)
        print(f"first make serve: installed after {installed:.1f} s, /health answered after {ready:.1f} s "
              f"(target ≤ {TARGET_SECONDS:.0f} s: {'met' if ready <= TARGET_SECONDS else 'not met'})")
        _, again = timed_serve(clone, folder / "data-2", folder / "models", environment)
        print(f"a new data folder, same install: /health answered after {again:.1f} s (target ≤ 3 s: "
              f"{'met' if again <= 3 else 'not met'})")
    finally:
        if not arguments.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"load average after: {', '.join(f'{figure:.2f}' for figure in os.getloadavg())}")


if __name__ == "__main__":
    main()
