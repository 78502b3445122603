"""The three systems, each storing every turn one at a time and then answering every question, timed alike.

- the floor: the project's own embedder (whatever `Settings()` picks) and an exact numpy cosine scan over
  one matrix per conversation, in this process: the least work any system has to do for the same result;
- ours: `zengram serve` from this virtualenv as a subprocess, driven over loopback HTTP by the recall
  benchmark's own `ingest` and `ask_through`;
- mem0 OSS: `bench.peers.mem0_side` in the peers virtualenv, fed the same workload as JSON.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from zengram.ports import Embedder

from bench.peers.workload import Answer, answers_from_json, workload_json
from bench.recall.data import Conversation
from bench.recall.metrics import Outcome
from bench.recall.runner import ask_through, ingest

ROOT = Path(__file__).resolve().parents[2]
SEARCH_LIMIT = 50  # what the recall benchmark asks for; recall@10 reads the first 10
API_KEY = "peers-bench-key"
Progress = Callable[[str], None]


def project_embedder() -> Embedder:
    """The embedder our server builds under the same environment (its default unless ZENGRAM_EMBEDDER says)."""
    from zengram.bootstrap import build_embedder
    from zengram.settings import Settings

    return build_embedder(Settings())


def run_floor(conversations: Sequence[Conversation], embedder: Embedder,
              progress: Progress) -> tuple[float, list[Answer]]:
    """(ingest seconds, answers): one `embed` call per turn, as one write per turn, then an exact scan."""
    embedder.embed(["warm up"])  # loads the model outside the timed part, as the others do
    started = time.perf_counter()
    matrices = {c.sample_id: np.vstack([embedder.embed([turn.content]) for turn in c.turns]) for c in conversations}
    ingest_seconds = time.perf_counter() - started
    progress(f"floor: embedded {sum(len(c.turns) for c in conversations)} turns in {ingest_seconds:.0f}s")
    answers = []
    for conversation in conversations:
        matrix = matrices[conversation.sample_id]
        dia_ids = [turn.dia_id for turn in conversation.turns]
        for question in conversation.questions:
            asked = time.perf_counter()
            scores = matrix @ embedder.embed([question.text])[0]
            best = np.argsort(-scores, kind="stable")[:SEARCH_LIMIT]
            elapsed_ms = (time.perf_counter() - asked) * 1000
            answers.append(Answer([frozenset({dia_ids[i]}) for i in best], elapsed_ms))
    return ingest_seconds, answers


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def zengram_server(data_dir: Path, overrides: dict[str, str]) -> Iterator[httpx.Client]:
    """`zengram serve` on a free loopback port with a fresh data folder; stopped (and waited for) on exit."""
    port = free_port()
    env = {**os.environ, "ZENGRAM_API_KEY": API_KEY, "BRAIN_API_KEY": API_KEY,
           "ZENGRAM_RATE_LIMIT_ENABLED": "false",  # the ingest is thousands of POSTs from one key
           "ZENGRAM_LOG_LEVEL": "WARNING",  # no access log line per request
           **{f"ZENGRAM_{name.upper()}": value for name, value in overrides.items()}}
    log_path = data_dir / "server.log"
    command = [str(Path(sys.executable).with_name("zengram")), "serve", "--data-dir", str(data_dir / "store"),
               "--host", "127.0.0.1", "--port", str(port)]
    with log_path.open("w") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"x-api-key": API_KEY},
                          timeout=120.0) as client:
            _wait_until_healthy(client, process, log_path)
            yield client
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_healthy(client: httpx.Client, process: subprocess.Popen[bytes], log_path: Path,
                        timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"zengram serve exited with {process.returncode}:\n{log_path.read_text()[-2000:]}")
        try:
            if client.get("/health").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"zengram serve was not healthy within {timeout_s:.0f}s:\n{log_path.read_text()[-2000:]}")


def run_ours(conversations: list[Conversation], overrides: dict[str, str],
             progress: Progress) -> tuple[float, list[Outcome]]:
    """(ingest seconds, outcomes) through POST /memory and GET /memory/search, as `make bench-recall` does."""
    with tempfile.TemporaryDirectory(prefix="peers-ours-") as scratch, \
            zengram_server(Path(scratch), overrides) as client:
        client.get("/memory/search", params={"q": "warm up", "limit": 1}).raise_for_status()  # loads the model
        started = time.perf_counter()
        mapping = ingest(client, conversations, progress)
        ingest_seconds = time.perf_counter() - started
        return ingest_seconds, ask_through(client, conversations, mapping, limit=SEARCH_LIMIT)


def run_mem0(conversations: Sequence[Conversation], python: Path, threads: int,
             progress: Progress) -> tuple[dict[str, Any], list[Answer]]:
    """(mem0's report without its answers, answers) from `bench.peers.mem0_side` in the peers virtualenv."""
    if not python.exists():
        raise SystemExit(f"{python} does not exist: `make bench-peers` creates the peers virtualenv")
    with tempfile.TemporaryDirectory(prefix="peers-mem0-run-") as scratch:
        workload, answers = Path(scratch) / "workload.json", Path(scratch) / "answers.json"
        workload.write_text(json.dumps(workload_json(conversations)))
        env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
               "PYTHONPATH": str(ROOT)}
        progress(f"mem0: {python} -m bench.peers.mem0_side (torch threads {threads})")
        subprocess.run([str(python), "-m", "bench.peers.mem0_side", str(workload), str(answers)],
                       cwd=ROOT, env=env, check=True)
        report: dict[str, Any] = json.loads(answers.read_text())
    raw_answers = report.pop("answers")
    return report, answers_from_json(raw_answers, conversations)
