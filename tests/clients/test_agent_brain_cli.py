"""Acceptance: the real Agent Brain CLI (PyPI agent-brain-cli 10.7.0, unchanged, in .venv-agent-brain) against our
server, started by `zengram kb start --daemon` in a project folder. The Agent Brain CLI finds it the way it finds
its own server: through the runtime.json our CLI writes (base_url and API key), and sends `Authorization: Bearer`.

The server is a real process with the real offline embedding model; the sample folder (tests/data/kb_sample) holds
Markdown, Python, TypeScript and a PDF.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import REPO_ROOT

AGENT_BRAIN = REPO_ROOT / ".venv-agent-brain" / "bin" / "agent-brain"
SAMPLE = REPO_ROOT / "tests" / "data" / "kb_sample"
MODES = ["vector", "bm25", "hybrid", "graph", "multi"]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not AGENT_BRAIN.exists(), reason="agent-brain CLI missing: `make install` puts it in "
                                                        ".venv-agent-brain"),
]


class Project:
    def __init__(self, root: Path, environment: dict[str, str]) -> None:
        self.root = root
        self.environment = environment

    def zengram(self, *arguments: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "zengram.embedded", "kb", *arguments], cwd=self.root,
                              env=self.environment, capture_output=True, text=True, timeout=180, check=False)

    def agent_brain(self, *arguments: str, ok: bool = True) -> Any:
        """Runs the Agent Brain CLI with --json; returns its parsed output (checks the exit code when `ok`)."""
        done = subprocess.run([str(AGENT_BRAIN), *arguments, "--json"], cwd=self.root, env=self.environment,
                              capture_output=True, text=True, timeout=120, check=False)
        if ok:
            assert done.returncode == 0, done.stdout + done.stderr
        return json.loads(done.stdout)

    def runtime(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads((self.root / ".claude" / "agent-brain" / "runtime.json").read_text())
        return loaded

    def api(self, method: str, path: str, **options: Any) -> Any:
        runtime = self.runtime()
        response = httpx.request(method, f"{runtime['base_url']}{path}", timeout=30,
                                 headers={"x-api-key": runtime["api_key"]}, **options)
        response.raise_for_status()
        return response.json()

    def index(self, folder: str) -> dict[str, Any]:
        queued = self.agent_brain("index", folder, "--include-code")
        assert queued["status"] == "pending" and queued["job_id"].startswith("job_")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            job: dict[str, Any] = self.agent_brain("jobs", queued["job_id"])
            if job["status"] in ("done", "failed", "cancelled"):
                assert job["status"] == "done", job
                return job
            time.sleep(0.3)
        raise AssertionError("indexing did not finish")

    def query(self, text: str, mode: str, *extra: str) -> list[dict[str, Any]]:
        answer = self.agent_brain("query", text, "--mode", mode, "--top-k", "8", *extra)
        assert answer["total_results"] == len(answer["results"])
        results: list[dict[str, Any]] = answer["results"]
        return results


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    root = tmp_path_factory.mktemp("agent-brain-project")
    shutil.copytree(SAMPLE, root / "sample")
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("ZENGRAM_", "BRAIN_", "AGENT_BRAIN_", "API_KEY"))}
    environment.update({"HOME": str(root / "home"), "XDG_STATE_HOME": str(root / "xdg-state"),
                        "XDG_CONFIG_HOME": str(root / "xdg-config"), "PYTHONPATH": str(REPO_ROOT / "shared")})
    project = Project(root, environment)
    assert project.zengram("init").returncode == 0
    started = project.zengram("start", "--daemon", "--port", str(free_port()), "--json")
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        yield project
    finally:
        stopped = project.zengram("stop", "--json")
        assert json.loads(stopped.stdout)["status"] == "stopped", stopped.stdout + stopped.stderr


def test_the_runtime_file_is_what_agent_brain_reads(project: Project) -> None:
    runtime = project.runtime()
    assert runtime["base_url"].endswith("/kb") and runtime["port"] and runtime["pid"] and runtime["api_key"]
    assert oct((project.root / ".claude" / "agent-brain" / "runtime.json").stat().st_mode)[-3:] == "600"
    listed = json.loads(project.zengram("list", "--json").stdout)
    assert [entry["base_url"] for entry in listed] == [runtime["base_url"]]


def test_the_whole_cycle_with_the_unchanged_agent_brain_cli(project: Project) -> None:
    status = project.agent_brain("status")
    assert status["health"]["status"] == "healthy" and status["indexing"]["total_chunks"] == 0

    first = project.index("sample")
    assert first["total_documents"] == 6 and first["progress"]["files_total"] == 6
    status = project.agent_brain("status")
    assert status["indexing"]["total_documents"] == 6
    assert status["indexing"]["total_chunks"] == first["total_chunks"]
    assert status["indexing"]["indexed_folders"] == [str(project.root / "sample")]

    for mode in MODES:
        results = project.query("how is the invoice total computed with tax", mode, "--threshold", "0.1")
        assert results, mode
        assert all({"text", "source", "score", "chunk_id"} <= set(result) for result in results)
        assert any(result["source"].endswith(("billing.py", "guide.md")) for result in results[:3]), (mode, results)
    pdf = project.query("how many days of paid vacation", "hybrid", "--threshold", "0.2")
    assert pdf[0]["source"].endswith("handbook.pdf")
    typescript = project.query("shopping cart subtotal", "bm25")
    assert typescript[0]["source"].endswith("cart.ts")

    # Graph: what calls compute_total? Its two callers first, then its definition.
    callers = project.query("what calls compute_total", "graph")
    top = [result["text"] for result in callers[:2]]
    assert all("compute_total(" in text for text in top)
    assert {text.split("\n", 1)[0] for text in top} == {"class Invoice:", "class MonthlyReport(BaseReport):"}
    assert callers[2]["text"].startswith("def compute_total(")

    # Edit one file, delete another, index again: nothing stale, nothing twice.
    (project.root / "sample" / "docs" / "guide.md").write_text(
        "# Billing service guide\n\nInvoices are now produced by the ledger service.\n")
    (project.root / "sample" / "web" / "cart.ts").unlink()
    second = project.index("sample")
    assert second["total_documents"] == 5
    assert not [result for result in project.query("shopping cart subtotal addItem", "bm25")
                if result["source"].endswith("cart.ts")]
    guide = [result for result in project.query("ledger service invoices", "bm25")
             if result["source"].endswith("guide.md")]
    assert len(guide) == 1 and "ledger" in guide[0]["text"]
    everything = project.query("invoice", "bm25", "--top-k", "100")
    assert len({result["chunk_id"] for result in everything}) == len(everything)
    reindexed = project.api("GET", "/query/count")["total_chunks"]
    assert reindexed == second["total_chunks"]
    cache = project.agent_brain("cache", "status")  # GET /index/cache/: the embedding cache's counters
    assert cache["entry_count"] > 0 and cache["misses"] > 0 and cache["size_bytes"] > 0

    project.agent_brain("reset", "--yes")
    assert project.agent_brain("status")["indexing"]["total_chunks"] == 0
    fresh = project.index("sample")
    assert fresh["total_chunks"] == reindexed  # the re-indexed state equals a clean index of the same files


def test_a_path_escape_is_refused_with_403(project: Project, tmp_path: Path) -> None:
    for folder in ("/etc", str(tmp_path)):
        refused = project.agent_brain("index", folder, ok=False)
        assert refused["error"] == "Server returned 403", refused
        assert "outside the allowed roots" in refused["detail"]


def test_our_cli_indexes_with_a_progress_bar_and_queries(project: Project) -> None:
    indexed = project.zengram("index", "sample")
    assert indexed.returncode == 0, indexed.stderr
    assert "documents" in indexed.stdout
    answer = json.loads(project.zengram("query", "what calls compute_total", "--mode", "graph", "--top-k", "2",
                                        "--include-relationships", "--json").stdout)
    assert answer["results"][0]["graph_score"] >= 0.9
    assert any(relation["target"] == "compute_total" for relation in answer["results"][0]["relationships"])
    status = json.loads(project.zengram("status", "--json").stdout)
    assert status["indexing"]["graph_index"]["entity_count"] > 0
    assert project.zengram("reset", "--yes").returncode == 0
