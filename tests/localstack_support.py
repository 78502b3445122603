"""LocalStack for the tests that moto cannot serve (Step Functions' StartSyncExecution): the emulator named by
ZENGRAM_TEST_LOCALSTACK_URL, else one started here from .venv-localstack (`make localstack`, host mode, Python >=
3.12) on a free loopback port and stopped when the tests end. Tests using it belong to xdist group "localstack"
(`pytest -n 2 --dist loadgroup` then runs them on one worker, with one emulator)."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
LOCALSTACK_PYTHON = REPO_ROOT / ".venv-localstack" / "bin" / "python"
SERVICES = "stepfunctions"
START_SECONDS = 120

_lock = threading.Lock()
_url: str | None = None
_failure: str | None = None


class LocalStackUnavailable(Exception):
    """Why no LocalStack can be had here (the tests skip with this reason)."""


def localstack_url() -> str:
    """The URL of a running LocalStack with Step Functions, started on first use."""
    global _url, _failure
    with _lock:
        if _url is None and _failure is None:
            try:
                _url = os.environ.get("ZENGRAM_TEST_LOCALSTACK_URL") or _start()
            except LocalStackUnavailable as error:
                _failure = str(error)
        if _url is None:
            raise LocalStackUnavailable(_failure)
        return _url


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _start() -> str:
    if not LOCALSTACK_PYTHON.exists():
        raise LocalStackUnavailable("LocalStack is not installed: `make localstack` needs a Python >= 3.12")
    port = _free_port()
    scratch = Path(tempfile.mkdtemp(prefix="zengram-localstack-"))
    environment = {
        **{name: value for name, value in os.environ.items() if not name.startswith(("AWS_", "PYTHON"))},
        "GATEWAY_LISTEN": f"127.0.0.1:{port}", "SERVICES": SERVICES, "DNS_ADDRESS": "0",
        "LOCALSTACK_VOLUME_DIR": str(scratch / "volume"), "FILESYSTEM_ROOT": str(scratch / "filesystem"),
        "SKIP_SSL_CERT_DOWNLOAD": "1", "DISABLE_EVENTS": "1",
    }
    log = (scratch / "localstack.log").open("w")
    process = subprocess.Popen([str(LOCALSTACK_PYTHON), "-m", "localstack.runtime.main"], env=environment,
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    atexit.register(_stop, process, scratch)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LocalStackUnavailable(f"LocalStack exited with {process.returncode}: see {log.name}")
        if _stepfunctions_ready(url):
            return url
        time.sleep(0.5)
    _stop(process, None)  # its scratch folder (and log) stays for a look
    raise LocalStackUnavailable(f"LocalStack did not serve Step Functions within {START_SECONDS} s: see {log.name}")


def _stepfunctions_ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_localstack/health", timeout=2) as response:
            health = json.loads(response.read())
    except (OSError, ValueError):
        return False
    return health.get("services", {}).get("stepfunctions") in ("available", "running")


def _stop(process: subprocess.Popen[bytes], scratch: Path | None) -> None:
    """Ends the emulator this module started (its own process group), then removes its scratch folder."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)
