"""`python -m bench.write_cpu`: the server's CPU time per single-turn `POST /memory`, the embedding left out.

What `make bench-peers` measures as ingest turns/s is wall time on a shared machine, so a change worth 0.2 ms of
CPU a write drowns in the load. This measures CPU instead: LoCoMo turns, one `POST /memory` per turn as
`bench.peers` sends them (`bench.recall.runner.ingest`), to a real `zengram serve` (uvicorn, every middleware,
the write-behind index write) in a child process, and reads the child's user + system time from /proc around the
writes, after it has gone idle (so the index writes left behind the answers are counted too).

The embedding is separated, not just subtracted: the child's embedder (`ReplayEmbedder`) answers from a cache of
real MiniLM vectors, keyed by the exact text the server asks to embed. A first, unmeasured round fills the cache
(the real embedder, every write); each measured round then serves a fresh data folder with the full cache, so
the vectors, the index and every code path are those of a real run, and the figure is everything a write costs
but its embedding. The client's own CPU (httpx, in this process) is read with `time.thread_time`.

`--baseline DIR` (another checkout's `shared/` folder, e.g. one `git archive` wrote) measures that code too, in
alternate rounds with this one (who goes first alternating), so a change is judged against a baseline measured
under the same load. `--py-spy FILE` records the child with py-spy (collapsed stacks) during the first measured
round. Prints one line per round and the medians; no figure is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
from zengram.kernel.ports import Embedder

from bench.recall.data import Conversation, load
from bench.recall.runner import ingest
from bench.server import CLOCK_TICKS, ServerProcess, client
from bench.stats import format_load, load_average
from bench.wrapping import InFrontOf

DEFAULT_CONVERSATIONS = ("conv-26", "conv-30")
ROOT = Path(__file__).resolve().parents[1]
CURRENT = "this code"
SERVE = "serve"
MISSES = "replay embedder, texts embedded for real:"
THREAD_MAP_SECONDS = 0.5


class ReplayEmbedder(InFrontOf):
    """The `Embedder` port over a cache of `inner`'s vectors, by text: a cached text costs a dictionary look-up,
    any other is embedded by `inner` and remembered. `misses` counts the texts `inner` embedded."""

    def __init__(self, inner: Embedder, cache: Path) -> None:
        super().__init__(inner)
        self._cache = cache
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}
        self._lock = threading.Lock()
        self.misses = 0
        if cache.exists():
            with np.load(cache) as stored:
                texts = json.loads(str(stored["texts"]))
                self._vectors = dict(zip(texts, stored["vectors"], strict=True))

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        missing = [text for text in dict.fromkeys(texts) if text not in self._vectors]
        if missing:
            vectors = self._inner.embed(missing)
            with self._lock:
                self._vectors.update(zip(missing, vectors, strict=True))
                self.misses += len(missing)
        return np.vstack([self._vectors[text] for text in texts]).astype(np.float32, copy=False)

    def save(self) -> None:
        if not self.misses:
            return
        texts = list(self._vectors)
        np.savez(self._cache, texts=np.array(json.dumps(texts)), vectors=np.vstack([self._vectors[t] for t in texts]))


def serve_child(cache: Path, thread_map: Path) -> None:
    """The child: `zengram serve` as the CLI runs it, but for its embedder (a `ReplayEmbedder` over the real one);
    it keeps `thread_map` naming its threads by native id, so the parent can split its CPU time by thread."""
    import logging

    import uvicorn
    from zengram.adapters.factories import build_embedder
    from zengram.assembly.containers import build_container
    from zengram.embedded.app import build_embedded_app
    from zengram.embedded.background import SHUTDOWN_GRACE
    from zengram.settings import Settings

    settings = Settings()
    logging.basicConfig(level=settings.log_level)
    embedder = ReplayEmbedder(build_embedder(settings), cache)
    container = build_container(settings, embedder=embedder, check_index=True)

    def name_threads() -> None:
        while True:
            names = {thread.native_id: thread.name for thread in threading.enumerate()}
            thread_map.with_suffix(".tmp").write_text(json.dumps(names))
            thread_map.with_suffix(".tmp").replace(thread_map)
            time.sleep(THREAD_MAP_SECONDS)

    threading.Thread(target=name_threads, name="bench-thread-map", daemon=True).start()
    try:
        uvicorn.run(build_embedded_app(settings, container), host=settings.host, port=settings.port,
                    log_level=settings.log_level.lower(), timeout_graceful_shutdown=SHUTDOWN_GRACE)
    finally:
        embedder.save()
        print(f"{MISSES} {embedder.misses}", flush=True)


class ReplayServer(ServerProcess):
    """`ServerProcess`, running `serve_child` instead of the CLI, with its CPU time split by thread."""

    def __init__(self, data_dir: Path, cache: Path, code: Path | None = None) -> None:
        super().__init__(data_dir)
        self._cache = cache
        if code is not None:  # that `zengram` package first, then this repository (for `bench`)
            self._env["PYTHONPATH"] = os.pathsep.join([str(code), str(ROOT)])
        self.thread_map = data_dir.parent / f"{data_dir.name}.threads.json"

    def command(self) -> list[str]:
        return [sys.executable, "-m", "bench.write_cpu", SERVE, str(self._cache), str(self.thread_map)]

    def cpu_by_thread(self) -> dict[str, float]:
        """CPU seconds so far of the threads alive now, by kind (`thread_kind` of their names)."""
        names = json.loads(self.thread_map.read_text()) if self.thread_map.exists() else {}
        seconds: dict[str, float] = defaultdict(float)
        for task in Path(f"/proc/{self.pid}/task").iterdir():
            try:
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            except FileNotFoundError:  # the thread ended meanwhile
                continue
            seconds[thread_kind(names.get(task.name, "?"))] += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        return seconds


def thread_kind(name: str) -> str:
    """`zengram-embed_1` → `zengram-embed`, `AnyIO worker thread` as it is; unnamed native threads (SQLite, BLAS)
    are `?`."""
    return re.sub(r"_\d+$", "", name)


@dataclass
class Round:
    writes: int
    server_cpu_ms: float
    client_cpu_ms: float
    wall_ms: float
    embedded_for_real: int
    by_thread_ms: dict[str, float] = field(default_factory=dict)


@contextmanager
def py_spy(pid: int, output: Path | None) -> Iterator[None]:
    """py-spy recording `pid` into `output` (collapsed stacks, idle frames left out) while the block runs."""
    if output is None:
        yield
        return
    beside = Path(sys.executable).with_name("py-spy")  # the virtualenv's, when its bin/ is not on PATH
    recorder = subprocess.Popen([str(beside) if beside.exists() else "py-spy", "record", "--pid", str(pid),
                                 "--threads", "--rate", "500", "--format", "raw", "--output", str(output),
                                 "--nonblocking"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)
        yield
    finally:
        recorder.send_signal(signal.SIGINT)
        recorder.wait(timeout=60)


def one_round(conversations: list[Conversation], cache: Path, scratch: Path, profile: Path | None = None,
              code: Path | None = None) -> Round:
    """Stores every turn of `conversations` into a fresh store: the child's CPU (in all, and by thread) and the
    client's, per write. `code`: the `shared/` folder the child imports zengram from (None: this process's)."""
    folder = Path(tempfile.mkdtemp(prefix="write-cpu-", dir=scratch))
    writes = sum(len(conversation.turns) for conversation in conversations)
    try:
        with ReplayServer(folder / "store", cache, code) as server, client(server.url) as http:
            http.get("/memory/search", params={"q": "warm up", "limit": 1}).raise_for_status()
            server.settle()
            with py_spy(server.pid, profile):
                cpu, threads = server.cpu_seconds(), server.cpu_by_thread()
                thread, wall = time.thread_time(), time.perf_counter()
                ingest(http, conversations, lambda _: None)
                client_cpu, wall = time.thread_time() - thread, time.perf_counter() - wall
                server.settle()
                server_cpu, after = server.cpu_seconds() - cpu, server.cpu_by_thread()
        lines = [line for line in server.log_path.read_text().splitlines() if line.startswith(MISSES)]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    per_write = 1000 / writes
    by_thread = {kind: (seconds - threads.get(kind, 0.0)) * per_write for kind, seconds in after.items()}
    by_thread["(threads ended meanwhile)"] = max(0.0, server_cpu * per_write - sum(by_thread.values()))
    return Round(writes, server_cpu * per_write, client_cpu * per_write, wall * per_write,
                 int(lines[-1].split()[-1]) if lines else -1, by_thread)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == [SERVE]:
        serve_child(Path(arguments[1]), Path(arguments[2]))
        return 0
    parser = argparse.ArgumentParser(prog="python -m bench.write_cpu", description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", default=",".join(DEFAULT_CONVERSATIONS),
                        help="LoCoMo sample ids, comma-separated (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds (default: %(default)s)")
    parser.add_argument("--cache", type=Path, default=None,
                        help="the vector cache (.npz; default: bench/.data/write-cpu-vectors.npz)")
    parser.add_argument("--py-spy", dest="py_spy", type=Path, default=None,
                        help="record the child with py-spy during the first measured round, into this file")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a shared/ folder to measure in alternate rounds with this code")
    args = parser.parse_args(arguments)
    from bench.paths import DATA

    wanted = set(args.conversations.split(","))
    conversations = [c for c in load() if c.sample_id in wanted]
    cache = args.cache or DATA / "write-cpu-vectors.npz"
    cache.parent.mkdir(parents=True, exist_ok=True)
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC, load {format_load(load_average())}, "
          f"{', '.join(sorted(wanted))}: {sum(len(c.turns) for c in conversations)} writes a round", flush=True)
    codes: list[tuple[str, Path | None]] = [(CURRENT, None)]
    if args.baseline is not None:
        codes.append((f"baseline {args.baseline}", args.baseline.resolve()))
    rounds: dict[str, list[Round]] = {label: [] for label, _ in codes}
    with tempfile.TemporaryDirectory(prefix="write-cpu-") as scratch:
        filled = one_round(conversations, cache, Path(scratch))  # fills the cache: the real embedder, every write
        print(f"filling round ({filled.embedded_for_real} texts embedded): server {filled.server_cpu_ms:.2f} ms CPU "
              "a write", flush=True)
        for number in range(args.rounds):
            for label, code in codes[number % len(codes):] + codes[:number % len(codes)]:
                profile = args.py_spy if number == 0 and code is None else None
                measured = one_round(conversations, cache, Path(scratch), profile, code)
                rounds[label].append(measured)
                print(f"round {number + 1}, {label}: server {measured.server_cpu_ms:.2f} ms CPU a write, client "
                      f"{measured.client_cpu_ms:.2f} ms, wall {measured.wall_ms:.2f} ms, "
                      f"{measured.embedded_for_real} texts embedded for real; load {format_load(load_average())}",
                      flush=True)
    for label, measured_rounds in rounds.items():
        print(f"{label}: {render(measured_rounds)}")
    return 0


def render(rounds: Sequence[Round]) -> str:
    """The medians over rounds: the server's CPU a write, by thread kind, and the client's."""
    kinds = sorted({kind for measured in rounds for kind in measured.by_thread_ms},
                   key=lambda kind: -statistics.median(r.by_thread_ms.get(kind, 0.0) for r in rounds))
    lines = [f"median over {len(rounds)} rounds, CPU ms a write (embedding excluded):",
             f"  server {statistics.median(r.server_cpu_ms for r in rounds):.2f}"]
    medians = {kind: statistics.median(r.by_thread_ms.get(kind, 0.0) for r in rounds) for kind in kinds}
    lines += [f"    {kind}: {median:.2f}" for kind, median in medians.items() if median >= 0.005]
    lines.append(f"  client (httpx) {statistics.median(r.client_cpu_ms for r in rounds):.2f}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
