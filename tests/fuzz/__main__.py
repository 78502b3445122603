"""`make fuzz`: the schemathesis CLI against a live embedded server, every phase and every check.

    python -m tests.fuzz [--max-examples 50] [--seed 20260401]

The server runs from a fresh data folder with a throwaway API key, rate limits off (the fuzzer is one caller
sending thousands of requests) and no LLM configured. The run fails on any check failure that
`rules.accepted_reason` does not explain, and on any unhandled error in the server's log.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
UNHANDLED = ("Traceback", "unhandled error")


def main() -> int:
    options = _options()
    with tempfile.TemporaryDirectory(prefix="zengram-fuzz-") as folder:
        work = Path(folder)
        key = secrets.token_urlsafe(24)
        port = _free_port()
        log_path = work / "server.log"
        with log_path.open("w") as log:
            server = subprocess.Popen(
                [str(BIN / "zengram"), "serve", "--data-dir", str(work / "data"), "--port", str(port)],
                env=_server_env(key), stdout=log, stderr=subprocess.STDOUT,
            )
            try:
                base_url = f"http://127.0.0.1:{port}"
                _wait_until_healthy(base_url, server)
                started = time.monotonic()
                outcome = subprocess.run(_schemathesis_command(base_url, key, options), env=_cli_env(), check=False)
                elapsed = time.monotonic() - started
            finally:
                server.terminate()
                server.wait(timeout=30)
        log_text = log_path.read_text()
        unhandled = sum(log_text.count(marker) for marker in UNHANDLED)
        print(f"\nfuzz: schemathesis exit code {outcome.returncode}, {elapsed:.0f} s; "
              f"server log: {unhandled} unhandled error(s)")
        if unhandled:
            print(log_text[-5_000:])
        return 1 if outcome.returncode or unhandled else 0


def _options() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=int(os.environ.get("FUZZ_MAX_EXAMPLES", "50")),
                        help="examples per operation and phase (default 50: about 3,000 cases)")
    parser.add_argument("--seed", type=int, default=int(os.environ.get("FUZZ_SEED", "20260401")))
    return parser.parse_args()


def _server_env(key: str) -> dict[str, str]:
    """Only what the server needs: nothing from the caller's shell can point it at a real LLM or other data."""
    return {
        "PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", ""),
        "BRAIN_API_KEY": key, "ZENGRAM_RATE_LIMIT_ENABLED": "false", "ZENGRAM_LOG_LEVEL": "WARNING",
        # the memory event stream as a short long poll (the AWS mode), so each of its responses ends
        "ZENGRAM_CHAT_EVENTS_WINDOW_SECONDS": "0.2",
    }


def _cli_env() -> dict[str, str]:
    return {**os.environ, "SCHEMATHESIS_HOOKS": "tests.fuzz.hooks",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}


def _schemathesis_command(base_url: str, key: str, options: argparse.Namespace) -> list[str]:
    return [
        str(BIN / "schemathesis"), "run", f"{base_url}/openapi.json",
        "--header", f"x-api-key: {key}",
        "--checks", "all",
        "--max-examples", str(options.max_examples),
        "--seed", str(options.seed),
        "--workers", "1",  # one core for the fuzzer, one for the server
    ]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_until_healthy(base_url: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120  # the first start loads the embedding model
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with code {server.returncode} before it was healthy")
        try:
            with urllib.request.urlopen(f"{base_url}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit("the server was not healthy within 120 s")


if __name__ == "__main__":
    sys.exit(main())
