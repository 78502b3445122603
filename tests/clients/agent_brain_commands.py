"""Every command of the unchanged agent-brain-cli 10.7.0, what it needs, and the scenario that runs the ones our
server backs (tests/clients/test_agent_brain_cli_commands.py runs it against the embedded host and the AWS host).

`COMMANDS` is compared with the CLI's own command tree (click introspection), so a command the CLI gains or one this
table forgets fails the test."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.support import REPO_ROOT

AGENT_BRAIN = REPO_ROOT / ".venv-agent-brain" / "bin" / "agent-brain"
AGENT_BRAIN_PYTHON = REPO_ROOT / ".venv-agent-brain" / "bin" / "python"

SERVER = "server"  # talks to the document server over HTTP: run against both hosts
MCP = "mcp"  # needs agent-brain-mcp, which is not published on PyPI: the CLI's own error, asserted
LOCAL = "local"  # reads or writes files of the CLI only: run, must not fail because of our server
LIFECYCLE = "lifecycle"  # starts or stops Agent Brain's own server: `zengram kb start/stop` do it for ours

COMMANDS: dict[str, str] = {
    "status": SERVER, "query": SERVER, "index": SERVER, "inject": SERVER, "jobs": SERVER, "reset": SERVER,
    "doctor": SERVER, "folders list": SERVER, "folders add": SERVER, "folders remove": SERVER,
    "cache status": SERVER, "cache clear": SERVER,
    "mcp start": MCP, "mcp stop": MCP, "prompt": MCP, "resources list": MCP, "resources read": MCP,
    "init": LOCAL, "list": LOCAL, "types list": LOCAL, "config show": LOCAL, "config path": LOCAL,
    "config validate": LOCAL, "config diff": LOCAL, "config migrate": LOCAL, "config wizard": LOCAL,
    "graph restore-from-snapshot": LOCAL, "install-agent": LOCAL, "uninstall": LOCAL,
    "start": LIFECYCLE, "stop": LIFECYCLE,
}

INTROSPECT = """
import json, click
from agent_brain_cli.cli import cli
def walk(command, path):
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            yield from walk(sub, path + [name])
    else:
        yield " ".join(path)
print(json.dumps(sorted(walk(cli, []))))
"""


def cli_command_tree() -> list[str]:
    done = subprocess.run([str(AGENT_BRAIN_PYTHON), "-c", INTROSPECT], capture_output=True, text=True, check=True,
                          timeout=60)
    tree: list[str] = json.loads(done.stdout)
    return tree


@dataclass
class Host:
    """One host as the CLI sees it. `folder`: what a user types for the sample folder; `change(relative, text)`
    writes (None: deletes) a file of it; `delivered()` hands the host what changed (AWS: the queued S3 events)."""

    name: str
    root: Path
    environment: dict[str, str]
    folder: str
    change: Callable[[str, str | None], None]
    api: Callable[[str, str, Any], Any]  # (method, path under /kb, JSON body): polls without a CLI start-up each
    delivered: Callable[[], None] = lambda: None
    ran: set[str] = field(default_factory=set)

    def run(self, *arguments: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        self.ran.add(command_of(arguments))
        return subprocess.run([str(AGENT_BRAIN), *arguments], cwd=self.root, env=self.environment,
                              capture_output=True, text=True, timeout=timeout, check=False)

    def json(self, *arguments: str, ok: bool = True) -> Any:
        done = self.run(*arguments, "--json")
        if ok:
            assert done.returncode == 0, (arguments, done.stdout, done.stderr)
        return json.loads(done.stdout)

    def wait(self, job_id: str, timeout: float = 120) -> dict[str, Any]:
        """Polls the job over HTTP, then shows it once through the CLI (`jobs JOB_ID`)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.api("GET", f"/index/jobs/{job_id}", None)["status"] in ("done", "failed", "cancelled"):
                job: dict[str, Any] = self.json("jobs", job_id)
                assert job["status"] == "done", job
                return job
            time.sleep(0.2)
        raise AssertionError(f"job {job_id} did not finish")

    def sources(self, text: str, mode: str = "bm25") -> list[str]:
        answer = self.api("POST", "/query", {"query": text, "mode": mode, "top_k": 20, "similarity_threshold": 0})
        return [result["source"] for result in answer["results"]]

    def until(self, condition: Callable[[], bool], what: str, timeout: float = 45) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.delivered()
            if condition():
                return
            time.sleep(0.5)
        raise AssertionError(f"{self.name}: {what} did not happen within {timeout} s")


def assert_every_command_ran(host: Host) -> None:
    assert {command for command, kind in COMMANDS.items() if kind != LIFECYCLE} <= host.ran


def command_of(arguments: tuple[str, ...] | list[str]) -> str:
    """The table's name of the command these arguments run (`--transport mcp` is a global option, not a word)."""
    words, skip = [], False
    for word in arguments:
        if skip or word.startswith("-"):
            skip = word == "--transport"
            continue
        words.append(word)
    for length in (2, 1):
        if " ".join(words[:length]) in COMMANDS:
            return " ".join(words[:length])
    return words[0] if words else ""


def exercise_server_commands(host: Host) -> None:
    """Every SERVER command of the table, on one host, with the watched folder's changes and the embedding cache."""
    assert host.json("status")["health"]["status"] == "healthy"

    queued = host.json("folders", "add", host.folder, "--include-code", "--watch", "auto", "--debounce", "1")
    first = host.wait(queued["job_id"])
    assert first["total_documents"] == 6
    [folder] = host.json("folders", "list")["folders"]
    assert (folder["watch_mode"], folder["watch_debounce_seconds"]) == ("auto", 1) and folder["chunk_count"] > 0
    assert queued["job_id"] in [job["job_id"] for job in host.json("jobs", "--limit", "5")]
    answer = host.json("query", "how is the invoice total computed with tax", "--mode", "hybrid")
    assert any(result["source"].endswith(("billing.py", "guide.md")) for result in answer["results"][:3]), answer

    # Re-indexing the unchanged folder embeds nothing: skipped by content hash, and with --force every vector
    # comes from the embedding cache.
    cache = host.json("cache", "status")
    assert cache["entry_count"] >= first["total_chunks"] and cache["misses"] >= first["total_chunks"]
    again = host.wait(host.json("index", host.folder, "--include-code")["job_id"])
    assert again["progress"]["chunks_created"] == 0 and again["progress"]["files_processed"] == 6
    forced = host.wait(host.json("index", host.folder, "--include-code", "--force")["job_id"])
    assert forced["progress"]["chunks_created"] == first["total_chunks"]
    after = host.json("cache", "status")
    assert after["misses"] == cache["misses"] and after["hits"] - cache["hits"] == first["total_chunks"]

    refused = host.json("jobs", forced["job_id"], "--cancel", ok=False)
    assert refused["error"] == "Server returned 409" and "already done" in refused["detail"]
    watching = subprocess.Popen([str(AGENT_BRAIN), "jobs", "--watch"], cwd=host.root,
                                env={**host.environment, "PYTHONUNBUFFERED": "1"},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    host.ran.add("jobs")
    shown, errors = stop_with_ctrl_c(watching)
    assert watching.returncode == 0 and "Agent Brain Job Queue" in shown and "Stopped watching" in shown, (
        shown[-2000:], errors)
    assert forced["job_id"][:12] in shown

    script = host.root / "enrich.py"
    script.write_text("def process_chunk(chunk):\n    return chunk\n")
    injected = host.json("inject", host.folder, "--script", str(script), ok=False)
    assert injected["error"] == "Server returned 400" and "does not run injector scripts" in injected["detail"]
    metadata = host.root / "metadata.json"
    metadata.write_text('{"team": "billing"}')
    injected = host.json("inject", host.folder, "--folder-metadata", str(metadata), ok=False)
    assert "folder_metadata_file" in injected["detail"]

    # The watched folder: a file created, edited, deleted shows in queries without anyone indexing.
    host.change("docs/quokka.txt", "# Quokkas\n\nQuokkas live on Rottnest island.\n")
    host.until(lambda: any(source.endswith("quokka.txt") for source in host.sources("quokkas rottnest")),
               "the created file answering")
    host.change("docs/quokka.txt", "# Quokkas\n\nQuokkas are marsupials of Bald island.\n")
    host.until(lambda: any(source.endswith("quokka.txt") for source in host.sources("marsupials bald")),
               "the edited file answering")
    assert not [source for source in host.sources("rottnest") if source.endswith("quokka.txt")]
    host.change("docs/quokka.txt", None)
    host.until(lambda: not [source for source in host.sources("quokkas marsupials") if source.endswith("quokka.txt")],
               "the deleted file leaving the answers")
    cli_answer = host.json("query", "quokkas marsupials", "--mode", "bm25", "--threshold", "0")
    assert not [result for result in cli_answer["results"] if result["source"].endswith("quokka.txt")]
    assert "auto" in {job.get("source") for job in host.json("jobs")}

    doctor = host.run("doctor", "--json")
    checks = {check["name"]: check for check in json.loads(doctor.stdout)["checks"]}
    assert checks["server_reachable"]["status"] == "ok", checks["server_reachable"]

    cleared = host.run("cache", "clear", "--yes")
    assert cleared.returncode == 0 and "Cleared" in cleared.stdout, cleared.stdout + cleared.stderr
    assert host.json("cache", "status")["entry_count"] == 0
    removed = host.json("folders", "remove", host.folder, "--yes")
    assert removed["chunks_deleted"] > 0 and host.json("folders", "list")["folders"] == []
    assert host.json("reset", "--yes")["status"] == "completed"
    assert host.json("status")["indexing"]["total_chunks"] == 0


def exercise_other_commands(host: Host, elsewhere: Path) -> None:
    """MCP commands answer the CLI's own error (agent-brain-mcp is not on PyPI); local ones do not fail. They run
    side by side (each is a CLI start-up, the slow part)."""
    elsewhere.mkdir(parents=True, exist_ok=True)
    empty = {**host.environment, "HOME": str(elsewhere), "XDG_STATE_HOME": str(elsewhere / "state"),
             "XDG_CONFIG_HOME": str(elsewhere / "config")}
    mcp = [["mcp", "start", "--port", "0", "--json"], ["--transport", "mcp", "prompt", "search"],
           ["--transport", "mcp", "resources", "list"], ["--transport", "mcp", "resources", "read", "corpus://x"]]
    local = [["mcp", "stop", "--json"], ["types", "list", "--json"], ["config", "show", "--json"],
             ["config", "path", "--json"], ["config", "validate"], ["config", "diff"],
             ["config", "migrate", "--dry-run"], ["graph", "restore-from-snapshot", "--dry-run"],
             ["init", "--path", str(elsewhere), "--json"], ["list", "--json"]]
    running = {tuple(arguments): subprocess.Popen([str(AGENT_BRAIN), *arguments], cwd=host.root, env=host.environment,
                                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                                  stderr=subprocess.PIPE, text=True)
               for arguments in [*mcp, *local, ["config", "wizard"],
                                 ["install-agent", "--agent", "claude", "--dry-run", "--json"]]}
    done = {arguments: (process.communicate(timeout=120), process.returncode)
            for arguments, process in running.items()}
    # after the others: it removes state in `elsewhere` while `init --path elsewhere` would be creating it
    uninstall = subprocess.Popen([str(AGENT_BRAIN), "uninstall", "--yes", "--json"], cwd=elsewhere, env=empty,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done[("uninstall",)] = (uninstall.communicate(timeout=120), uninstall.returncode)
    host.ran.update(command_of(arguments) for arguments in done)
    for arguments in map(tuple, mcp):
        (out, err), code = done[arguments]
        assert code != 0 and "agent_brain_mcp" in (out + err).replace("-", "_"), (arguments, out, err)
    for arguments in map(tuple, local):
        (out, err), code = done[arguments]
        assert code == 0 or "No config file" in out + err, (arguments, out, err)
    assert "python" in json.loads(done[("types", "list", "--json")][0][0])
    assert json.loads(done[("mcp", "stop", "--json")][0][0])["status"] == "not_running"
    assert "Traceback" not in done[("config", "wizard")][0][1]  # it asks on a terminal; with none it stops cleanly
    install = done[("install-agent", "--agent", "claude", "--dry-run", "--json")][0][0]
    assert "plugin directory" in install  # its own packaging (the Claude plugin files), not our server
    assert done[("uninstall",)][1] == 0, done[("uninstall",)]


def http_api(base_url: str, key: str) -> Callable[[str, str, Any], Any]:
    def call(method: str, path: str, body: Any) -> Any:
        response = httpx.request(method, f"{base_url}{path}", json=body, timeout=60,
                                 headers={"Authorization": f"Bearer {key}"})
        assert response.status_code < 300, response.text
        return response.json()

    return call


def environment_for(root: Path) -> dict[str, str]:
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("ZENGRAM_", "BRAIN_", "AGENT_BRAIN_", "API_KEY"))}
    environment.update({"HOME": str(root / "home"), "XDG_STATE_HOME": str(root / "xdg-state"),
                        "XDG_CONFIG_HOME": str(root / "xdg-config"), "PYTHONPATH": str(REPO_ROOT / "shared"),
                        "TERM": "dumb", "COLUMNS": "200"})
    return environment


def stop_with_ctrl_c(process: subprocess.Popen[str], ready: str = "Press Ctrl+C to stop") -> tuple[str, str]:
    """Ctrl-C, as a user stops `jobs --watch`, once the watch loop has printed its first refresh (unbuffered): a
    Ctrl-C that lands while a loaded machine is still starting the CLI stops the start, not the watch."""
    lines: list[str] = []
    running = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if ready in line:
                running.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    running.wait(timeout=120)
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    reader.join(timeout=10)
    assert process.stderr is not None
    return "".join(lines), process.stderr.read()
