"""Per-project document servers the way Agent Brain keeps them, so its own CLI finds ours.

A project's state folder is `<project>/.claude/agent-brain/` (Agent Brain's legacy layout, which its CLI still
reads when the folder holds a `config.json`): `config.json` (written by `init`, with the API key), `runtime.json`
(written by `start`: base_url, port, pid, api_key) and `data/` (our data folder). Running instances are listed in
the same registry as Agent Brain's (`$XDG_STATE_HOME/agent-brain/registry.json`).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

STATE_DIR = Path(".claude") / "agent-brain"
NEW_STATE_DIR = Path(".agent-brain")
BASE_PATH = "/kb"
DEFAULT_CONFIG: dict[str, Any] = {
    "bind_host": "127.0.0.1", "port_range_start": 8000, "port_range_end": 8100, "auto_port": True,
    "chunk_size": 512, "chunk_overlap": 50,
}


@dataclass(frozen=True)
class Project:
    root: Path
    state_dir: Path

    @property
    def config_file(self) -> Path:
        return self.state_dir / "config.json"

    @property
    def runtime_file(self) -> Path:
        return self.state_dir / "runtime.json"

    def config(self) -> dict[str, Any]:
        return _read_json(self.config_file) or {}

    def runtime(self) -> dict[str, Any] | None:
        return _read_json(self.runtime_file)


def find_project(start: Path | None = None) -> Project:
    """The nearest folder (from `start` up) holding a state folder; else `start` itself with the default one."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        for state in (NEW_STATE_DIR, STATE_DIR):
            if (folder / state / "config.json").is_file():
                return Project(folder, folder / state)
    return Project(here, here / STATE_DIR)


def init_project(root: Path, *, force: bool = False) -> Project:
    project = Project(root.resolve(), root.resolve() / STATE_DIR)
    if project.config_file.exists() and not force:
        raise FileExistsError(f"{project.config_file} exists (use --force to overwrite)")
    (project.state_dir / "data").mkdir(parents=True, exist_ok=True)
    (project.state_dir / "logs").mkdir(exist_ok=True)
    config = {**DEFAULT_CONFIG, "project_root": str(project.root), "api_key": secrets.token_urlsafe(32)}
    _write_private(project.config_file, config)
    return project


def is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_healthy(base_url: str, timeout: float = 2.0) -> bool:
    try:
        return httpx.get(f"{base_url}/health/", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def running(project: Project) -> dict[str, Any] | None:
    """The project's runtime state if its server process is alive, else None (a stale file is removed)."""
    runtime = project.runtime()
    if runtime is None:
        return None
    if is_alive(int(runtime.get("pid", 0))):
        return runtime
    project.runtime_file.unlink(missing_ok=True)
    return None


def free_port(host: str, first: int, last: int) -> int:
    for port in range(first, last + 1):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((host, port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port between {first} and {last}")


def server_command(project: Project, host: str, port: int) -> tuple[list[str], dict[str, str]]:
    """`zengram serve` over the project's data folder, confined to the project, with the project's key."""
    command = [sys.executable, "-m", "zengram.embedded", "serve", "--data-dir", str(project.state_dir / "data"),
               "--host", host, "--port", str(port)]
    environment = {**os.environ, "BRAIN_API_KEY": str(project.config().get("api_key") or ""),
                   "ZENGRAM_DOCUMENTS_ALLOWED_ROOTS": str(project.root)}
    if not environment["BRAIN_API_KEY"]:
        environment.pop("BRAIN_API_KEY")
    return command, environment


def runtime_state(project: Project, host: str, port: int, pid: int, *, foreground: bool) -> dict[str, Any]:
    shown_host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    state: dict[str, Any] = {
        "schema_version": "1.0", "mode": "project", "project_root": str(project.root),
        "instance_id": uuid.uuid4().hex[:12], "base_url": f"http://{shown_host}:{port}{BASE_PATH}",
        "bind_host": host, "port": port, "pid": pid, "started_at": datetime.now(UTC).isoformat(),
        "socket_path": None, "api_key": project.config().get("api_key"),
    }
    if foreground:
        state["foreground"] = True
    return state


def start_daemon(project: Project, host: str, port: int, timeout: float) -> dict[str, Any]:
    command, environment = server_command(project, host, port)
    logs = project.state_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / "server.log", "a") as out, open(logs / "server.err", "a") as err:
        process = subprocess.Popen(command, env=environment, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
    state = runtime_state(project, host, port, process.pid, foreground=False)
    _write_private(project.runtime_file, state)
    register(project)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if is_healthy(state["base_url"]):
            return state
        if process.poll() is not None:
            break
        time.sleep(0.25)
    if process.poll() is None:
        process.terminate()
    project.runtime_file.unlink(missing_ok=True)
    raise RuntimeError(f"the server did not start; see {logs / 'server.err'}")


def stop(project: Project, timeout: float = 15.0) -> int | None:
    """Stops the project's server; returns its pid, or None when none was running."""
    runtime = running(project)
    if runtime is None:
        return None
    pid = int(runtime["pid"])
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and is_alive(pid):
        time.sleep(0.1)
    if is_alive(pid):
        os.kill(pid, signal.SIGKILL)
    project.runtime_file.unlink(missing_ok=True)
    return pid


def registry_path() -> Path:
    state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state_home) / "agent-brain" / "registry.json"


def register(project: Project) -> None:
    path = registry_path()
    registry = _read_json(path) or {}
    registry[str(project.root)] = {"state_dir": str(project.state_dir), "registered_at": datetime.now(UTC).isoformat()}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(registry, indent=2))


def instances() -> list[dict[str, Any]]:
    """Every registered project whose server is running, with its URL and health."""
    found = []
    for root, entry in sorted((_read_json(registry_path()) or {}).items()):
        state_dir = Path(entry.get("state_dir", Path(root) / STATE_DIR))
        runtime = running(Project(Path(root), state_dir))
        if runtime is not None:
            found.append({"project_root": root, "base_url": runtime.get("base_url"), "pid": runtime.get("pid"),
                          "port": runtime.get("port"), "healthy": is_healthy(str(runtime.get("base_url")))})
    return found


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        loaded = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


def _write_private(path: Path, content: dict[str, Any]) -> None:
    """0600: the file holds the API key."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(json.dumps(content, indent=2))
