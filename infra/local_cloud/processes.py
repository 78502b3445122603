"""Background processes of the local cloud: started detached (their own session, so they outlive `up`), logged to
the state folder, found again by pid, stopped by process group."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("0.0.0.0", 0))
        port: int = probe.getsockname()[1]
        return port


def start(name: str, command: Sequence[str], logs: Path, *, env: dict[str, str] | None = None,
          cwd: Path | None = None) -> int:
    """Starts `command` in a session of its own (stdin closed, output to logs/<name>.log); returns its pid."""
    logs.mkdir(parents=True, exist_ok=True)
    with (logs / f"{name}.log").open("ab") as log:
        process = subprocess.Popen(list(command), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   env=env, cwd=cwd, start_new_session=True)
    return process.pid


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (our own child that exited) is not alive
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def stop(pid: int, timeout: float = 20.0) -> None:
    """SIGTERM to the process group `pid` leads (each started process leads its own), then SIGKILL."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        except PermissionError:
            os.kill(pid, sig)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
            if not alive(pid):
                return
            time.sleep(0.1)


def answers(url: str, timeout: float = 2.0) -> bool:
    """Whether an HTTP server answers at `url` (any status counts: it is up)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout):
            return True
    except urllib.error.HTTPError:
        return True
    except (OSError, ValueError):
        return False


def wait_until(ready: Callable[[], bool], *, what: str, timeout: float, pid: int | None = None,
               log: Path | None = None) -> float:
    """Polls `ready` until it holds; returns the seconds it took. Fails early when `pid` exits."""
    started = time.monotonic()
    while not ready():
        if pid is not None and not alive(pid):
            raise RuntimeError(f"{what} exited before it was ready{tail(log)}")
        if time.monotonic() - started > timeout:
            raise RuntimeError(f"{what} was not ready after {timeout:.0f} s{tail(log)}")
        time.sleep(0.25)
    return time.monotonic() - started


def tail(log: Path | None, lines: int = 30) -> str:
    if log is None or not log.exists():
        return ""
    text = log.read_text(errors="replace").splitlines()[-lines:]
    return f"\n--- last lines of {log} ---\n" + "\n".join(text)
