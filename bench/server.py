"""`zengram serve` in a child process, as a user runs it: the benchmarks talk to it over loopback HTTP and read
its CPU time from /proc, so their figures hold the server's work only (never the benchmark's own client)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Self

import httpx
from zengram.adapters.sqlite.ann import GATHER_SECONDS as GRAPH_GATHER_SECONDS

from bench.paths import MODEL_CACHE
from bench.stores import API_KEY

START_TIMEOUT_SECONDS = 900.0  # a 100k store loads its vector matrix and builds its thread index on first open
SETTLE_TIMEOUT_SECONDS = 600.0  # a 100k store's background builds (HNSW graph, keyword postings) take tens of seconds
IDLE_CPU_SHARE = 0.05  # a server using under 5 % of a core over a window has finished its background work
# The window is longer than the graph maintainer's gather, during which it sleeps before applying the last writes'
# rows: a gathering maintainer must not pass for an idle server (its CPU would fall outside the measured series).
IDLE_WINDOW_SECONDS = max(0.5, 2 * GRAPH_GATHER_SECONDS)
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class ServerProcess:
    """`with ServerProcess(folder) as server:` serves the data folder at `server.url` until the block ends.

    The product's own settings, but for rate limits (off: benchmarks send thousands of requests a minute) and
    the shared cache of built MiniLM graphs; `settings` adds `ZENGRAM_<NAME>` overrides.
    """

    def __init__(self, data_dir: Path, **settings: str) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port: int = probe.getsockname()[1]
        self._env = {
            **os.environ, "BRAIN_API_KEY": API_KEY, "ZENGRAM_DATA_DIR": str(data_dir), "ZENGRAM_PORT": str(self.port),
            "ZENGRAM_RATE_LIMIT_ENABLED": "false", "ZENGRAM_MINILM_CACHE_DIR": str(MODEL_CACHE),
            "ZENGRAM_LOG_LEVEL": "WARNING",
            **{f"ZENGRAM_{name.upper()}": value for name, value in settings.items()},
        }
        self._log = data_dir.parent / f"{data_dir.name}.server.log"
        self._process: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        """What the child runs: `zengram serve`, as a user runs it."""
        return [sys.executable, "-m", "zengram.embedded.cli", "serve"]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        """The server's stdout and stderr."""
        return self._log

    @property
    def pid(self) -> int:
        if self._process is None:
            raise RuntimeError("the server is not running")
        return self._process.pid

    def __enter__(self) -> Self:
        with self._log.open("wb") as log:
            self._process = subprocess.Popen(self.command(), env=self._env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while True:
            if self._process.poll() is not None:
                raise RuntimeError(f"zengram serve exited with {self._process.returncode}; see {self._log}")
            try:
                if httpx.get(f"{self.url}/health", timeout=5).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.__exit__(None, None, None)
                raise RuntimeError(f"zengram serve did not answer within {START_TIMEOUT_SECONDS:.0f} s")
            time.sleep(0.2)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self._process is None:
            return
        self._process.send_signal(signal.SIGINT)  # uvicorn's graceful shutdown
        try:
            self._process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None

    def kill(self) -> None:
        """SIGKILL: the process dies mid-work, as in a crash or an out-of-memory kill (no graceful shutdown)."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None

    def settle(self, timeout: float = SETTLE_TIMEOUT_SECONDS) -> float:
        """Waits until the server is idle: the indexes it builds in the background when a store opens (the HNSW
        graph, the keyword postings) are built, so what is measured next is the steady state, not the start-up.
        Returns the seconds waited."""
        began = time.monotonic()
        while time.monotonic() - began < timeout:
            before = self.cpu_seconds()
            time.sleep(IDLE_WINDOW_SECONDS)
            if self.cpu_seconds() - before < IDLE_CPU_SHARE * IDLE_WINDOW_SECONDS:
                break
        return time.monotonic() - began

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server process so far, every thread of it."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def client(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"x-api-key": API_KEY}, timeout=120.0)
