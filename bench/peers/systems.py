"""The three systems behind one small interface, so a run can interleave them conversation by conversation.

Each `ingest(conversation)` stores every turn one at a time and returns the wall time it took; each
`ask(conversation)` asks every question of it and returns the outcomes. Models load before anything is timed.

- `Floor`: the project's own embedder (whatever `Settings()` builds) and an exact numpy cosine scan over one
  matrix per conversation, in this process: the least work any system has to do for the same answer;
- `Ours`: `zengram serve` from this virtualenv as a subprocess, driven over loopback HTTP by the recall
  benchmark's own `ingest` and `ask_through`;
- `Mem0`: `bench.peers.mem0_side` in the peers virtualenv, a long-lived subprocess fed JSON lines.
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
from typing import IO, Any, Protocol, TypeVar

import httpx
import numpy as np
import numpy.typing as npt
from zengram.kernel.ports import Embedder

from bench.peers.figures import outcomes_of
from bench.peers.workload import Answer, answers_from_json, conversation_json
from bench.recall.data import Conversation
from bench.recall.metrics import Outcome
from bench.recall.runner import ask_through, ingest

ROOT = Path(__file__).resolve().parents[2]
SEARCH_LIMIT = 50  # what the recall benchmark asks for; recall@10 reads the first 10
API_KEY = "peers-bench-key"
Progress = Callable[[str], None]
T = TypeVar("T")


class System(Protocol):
    name: str

    def ingest(self, conversation: Conversation) -> float: ...

    def ask(self, conversation: Conversation) -> list[Outcome]: ...


def rotated(items: Sequence[T], turn: int) -> list[T]:
    """`items` starting at position `turn` (mod its length): who goes first changes every conversation, so a load
    that drifts during the run falls on every system alike."""
    if not items:
        return []
    start = turn % len(items)
    return [*items[start:], *items[:start]]


def project_embedder() -> Embedder:
    """The embedder our server builds under the same environment (its default unless ZENGRAM_EMBEDDER says)."""
    from zengram.adapters.factories import build_embedder
    from zengram.settings import Settings

    return build_embedder(Settings())


class Floor:
    """One `embed` call per turn, as one write per turn; per question one `embed` call and an exact scan."""

    name = "floor"

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._matrices: dict[str, npt.NDArray[np.float32]] = {}
        embedder.embed(["warm up"])  # loads the model outside the timed part, as the others do

    def ingest(self, conversation: Conversation) -> float:
        started = time.perf_counter()
        self._matrices[conversation.sample_id] = np.vstack(
            [self._embedder.embed([turn.content]) for turn in conversation.turns])
        return time.perf_counter() - started

    def ask(self, conversation: Conversation) -> list[Outcome]:
        matrix = self._matrices[conversation.sample_id]
        dia_ids = [turn.dia_id for turn in conversation.turns]
        answers = []
        for question in conversation.questions:
            asked = time.perf_counter()
            scores = matrix @ self._embedder.embed([question.text])[0]
            best = np.argsort(-scores, kind="stable")[:SEARCH_LIMIT]
            elapsed_ms = (time.perf_counter() - asked) * 1000
            answers.append(Answer([frozenset({dia_ids[i]}) for i in best], elapsed_ms))
        return outcomes_of([conversation], answers)


class Ours:
    """Our public HTTP API, as `make bench-recall` drives it."""

    name = "ours"

    def __init__(self, client: httpx.Client, progress: Progress) -> None:
        self._client = client
        self._progress = progress
        self._mapping: dict[str, dict[str, list[tuple[int, int]]]] = {}
        client.get("/memory/search", params={"q": "warm up", "limit": 1}).raise_for_status()  # loads the model

    def ingest(self, conversation: Conversation) -> float:
        started = time.perf_counter()
        self._mapping.update(ingest(self._client, [conversation], self._progress))
        return time.perf_counter() - started

    def ask(self, conversation: Conversation) -> list[Outcome]:
        return ask_through(self._client, [conversation], self._mapping, limit=SEARCH_LIMIT)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def ours(overrides: dict[str, str], progress: Progress) -> Iterator[Ours]:
    """`zengram serve` on a free loopback port with a fresh data folder; stopped (and waited for) on exit."""
    port = free_port()
    env = {**os.environ, "ZENGRAM_API_KEY": API_KEY, "BRAIN_API_KEY": API_KEY,
           "ZENGRAM_RATE_LIMIT_ENABLED": "false",  # the ingest is thousands of POSTs from one key
           "ZENGRAM_LOG_LEVEL": "WARNING",  # no access log line per request
           **{f"ZENGRAM_{name.upper()}": value for name, value in overrides.items()}}
    with tempfile.TemporaryDirectory(prefix="peers-ours-") as scratch:
        log_path = Path(scratch) / "server.log"
        command = [str(Path(sys.executable).with_name("zengram")), "serve", "--data-dir", str(Path(scratch) / "store"),
                   "--host", "127.0.0.1", "--port", str(port)]
        with log_path.open("w") as log:
            process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"x-api-key": API_KEY},
                              timeout=120.0) as client:
                _wait_until_healthy(client, process, log_path)
                yield Ours(client, progress)
        finally:
            _stop(process)


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


def _stop(process: subprocess.Popen[Any]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class Mem0:
    """mem0 OSS in its own virtualenv: one JSON request per line on its stdin, one reply per line on its stdout.

    Times are measured inside the worker, around mem0's own calls (it is a library: no HTTP in its figures).
    """

    name = "mem0"

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self._process = process
        self.ready = self._reply()  # sent once the model is loaded and warmed up

    def _reply(self) -> dict[str, Any]:
        stdout: IO[str] | None = self._process.stdout
        line = stdout.readline() if stdout else ""
        if not line:
            raise RuntimeError(f"the mem0 worker stopped (exit code {self._process.poll()}); see its messages above")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def call(self, request: dict[str, Any]) -> dict[str, Any]:
        stdin = self._process.stdin
        if stdin is None:
            raise RuntimeError("the mem0 worker has no stdin")
        stdin.write(json.dumps(request) + "\n")
        stdin.flush()
        return self._reply()

    def ingest(self, conversation: Conversation) -> float:
        seconds: float = self.call({"op": "ingest", "conversation": conversation_json(conversation)})["seconds"]
        return seconds

    def ask(self, conversation: Conversation) -> list[Outcome]:
        reply = self.call({"op": "ask", "conversation": conversation_json(conversation)})
        return outcomes_of([conversation], answers_from_json(reply["answers"], [conversation]))

    def report(self) -> dict[str, Any]:
        return {**self.ready, **self.call({"op": "report"})}


@contextmanager
def mem0(python: Path, threads: int, progress: Progress) -> Iterator[Mem0]:
    if not python.exists():
        raise SystemExit(f"{python} does not exist: `make bench-peers` creates the peers virtualenv")
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads), "PYTHONPATH": str(ROOT)}
    progress(f"mem0: {python} -m bench.peers.mem0_side (torch threads {threads})")
    process = subprocess.Popen([str(python), "-m", "bench.peers.mem0_side"], cwd=ROOT, env=env, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        yield Mem0(process)
    finally:
        if process.stdin:
            process.stdin.close()  # the worker's loop ends and its scratch folder goes
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            _stop(process)
