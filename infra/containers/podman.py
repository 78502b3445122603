"""Podman as this project's container engine: installed when missing, configured, its Docker API served.

`python -m infra.containers.podman ensure` (or `make podman`) makes sure that:
- podman and runc are installed (apt-get, when root and missing; otherwise it says what is missing);
- /etc/containers/containers.conf selects runc and no default ulimits (crun fails on kernels in cgroup hybrid
  mode, and the default ulimits cannot be set inside some sandboxes); other keys are kept;
- `podman system service` answers the Docker API on the fixed socket SOCKET (started detached when it does not
  answer yet; it keeps running after this process ends, like a system service).
It prints the DOCKER_HOST value to use (`DOCKER_HOST=unix:///run/zengram-podman/podman.sock`): SAM CLI and
LocalStack talk to that socket. `python -m infra.containers.podman stop` ends a service this module started.

Other Python code calls `ensure_podman()` for the same, or `podman_problem()` to learn why it cannot be used.
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import tomlkit

SOCKET = Path("/run/zengram-podman/podman.sock")
DOCKER_HOST = f"unix://{SOCKET}"
PID_FILE = SOCKET.with_name("podman-service.pid")
LOG_FILE = SOCKET.with_name("podman-service.log")
CONTAINERS_CONF = Path("/etc/containers/containers.conf")
# What this machine's kernel needs (see the module docstring); merged into whatever the file already says.
REQUIRED_CONF: dict[str, dict[str, object]] = {"engine": {"runtime": "runc"}, "containers": {"default_ulimits": []}}
APT_PACKAGES = ("podman", "runc")
START_TIMEOUT_S = 30.0


class PodmanUnavailable(RuntimeError):
    """Podman cannot be installed, configured or started here; the message says why."""


def apt_install(packages: tuple[str, ...], commands: tuple[str, ...]) -> None:
    """Install the Debian packages when any of `commands` is missing, as `make chromium` does for Chromium.

    Only as root with apt-get; otherwise raises PodmanUnavailable naming what is missing.
    """
    missing = [c for c in commands if not shutil.which(c)]
    if not missing:
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise PodmanUnavailable(f"{', '.join(missing)} not installed, and this user cannot apt-get install them")
    cmd = ["apt-get", "install", "-y", "-qq", *packages]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}

    def apt(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)

    if apt(*cmd).returncode != 0:
        apt("apt-get", "update", "-qq")
        done = apt(*cmd)
        if done.returncode != 0:
            raise PodmanUnavailable(f"apt-get install {' '.join(packages)} failed: {done.stderr.decode()[-500:]}")
    still = [c for c in commands if not shutil.which(c)]
    if still:
        raise PodmanUnavailable(f"{', '.join(still)} still missing after apt-get install")


def configure(path: Path = CONTAINERS_CONF) -> bool:
    """Merge REQUIRED_CONF into the containers.conf at `path` (comments and other keys kept). True if changed."""
    text = path.read_text() if path.exists() else ""
    doc = tomlkit.parse(text)
    changed = False
    for table_name, wanted in REQUIRED_CONF.items():
        table = doc.get(table_name)
        if table is None:
            table = tomlkit.table()
            doc[table_name] = table
        for key, value in wanted.items():
            if table.get(key) != value:
                table[key] = value
                changed = True
    if changed:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(tomlkit.dumps(doc))
        except OSError as exc:
            raise PodmanUnavailable(f"cannot write {path}: {exc}") from exc
    return changed


class _UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: Path, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = str(path)

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


def answers(path: Path = SOCKET, timeout: float = 2.0) -> bool:
    """True when a Docker-API service on the socket answers GET /_ping with OK."""
    if not path.exists():
        return False
    conn = _UnixHTTPConnection(path, timeout)
    try:
        conn.request("GET", "/_ping")
        response = conn.getresponse()
        return response.status == 200 and response.read().strip() == b"OK"
    except OSError:
        return False
    finally:
        conn.close()


def start_service(path: Path = SOCKET) -> None:
    """Start `podman system service` on the socket, detached from this process, and wait until it answers."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()  # a stale socket from a service that died
    with LOG_FILE.open("ab") as log:
        process = subprocess.Popen(
            ["podman", "system", "service", "--time=0", f"unix://{path}"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
            # Not the caller's folder: the service outlives it, and once a clone that started it is deleted,
            # every container start fails ("write child: broken pipe", seen after a fresh-clone CI run).
            cwd="/",
        )
    PID_FILE.write_text(str(process.pid))
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if answers(path):
            return
        if process.poll() is not None:
            raise PodmanUnavailable(f"podman system service exited ({process.returncode}); see {LOG_FILE}")
        time.sleep(0.2)
    raise PodmanUnavailable(f"podman system service did not answer on {path} in {START_TIMEOUT_S:.0f} s")


def stop_service() -> bool:
    """Stop the service this module started (by its recorded process id). True if one was stopped."""
    try:
        pid = int(PID_FILE.read_text())
    except (OSError, ValueError):
        return False
    PID_FILE.unlink(missing_ok=True)
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    return True


def ensure_podman() -> str:
    """Install, configure and serve podman as needed; return the DOCKER_HOST value. Raises PodmanUnavailable."""
    if answers():
        return DOCKER_HOST
    apt_install(APT_PACKAGES, ("podman", "runc"))
    if os.geteuid() != 0:
        raise PodmanUnavailable("the podman service socket is served by root (rootful podman); not root here")
    configure()
    start_service()
    return DOCKER_HOST


def podman_problem() -> str | None:
    """None when ensure_podman() succeeds, else the reason podman cannot be used here."""
    try:
        ensure_podman()
    except PodmanUnavailable as exc:
        return str(exc)
    return None


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "ensure"
    if command == "ensure":
        try:
            print(f"DOCKER_HOST={ensure_podman()}")
        except PodmanUnavailable as exc:
            print(f"podman unavailable: {exc}", file=sys.stderr)
            return 1
        return 0
    if command == "stop":
        print("stopped" if stop_service() else "no podman service started by this module is running")
        return 0
    print("usage: python -m infra.containers.podman [ensure | stop]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
