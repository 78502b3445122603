"""A real single-node OpenSearch for the test session (infra/opensearch-node: one JVM, plugins on the classpath).

The pytest process that coordinates the run (xdist's controller, or the only process without xdist) starts
one node in the background at configure time, so the JVM warms up while tests are collected; workers inherit
`ZENGRAM_TEST_OPENSEARCH_DIR` and wait for the URL the node writes there. The node is built with Maven when
its build is missing or older than its sources, listens on a free loopback port, keeps its data in a
temporary folder, and stops when the run ends (or when the pytest process dies: it watches its stdin).

Command line, for a node to poke at by hand: `python -m tests.opensearch_node [build | run]`.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Where the tests that need the node live: the controller starts one only when the run selects them.
USERS = (REPO / "tests" / "contract" / "test_search_index.py", REPO / "tests" / "opensearch",
         REPO / "tests" / "documents" / "test_chunk_index_contract.py")
NODE_PROJECT = REPO / "infra" / "opensearch-node"
TARGET = NODE_PROJECT / "target"
CLASSPATH_FILE = TARGET / "classpath.txt"
BUILT_STAMP = TARGET / "zengram-built"  # touched after a good build (Maven leaves an unchanged classpath file alone)
MAIN_CLASS = "dev.zengram.opensearch.TestNode"
DIR_VARIABLE = "ZENGRAM_TEST_OPENSEARCH_DIR"
FOLDER_PREFIX = "zengram-opensearch-"
# A bounded heap (the machine is shared) and a JVM tuned for a short life: the serial collector, and the quick
# C1 compiler only. C2 costs more than it saves in a run this short: measured on a loaded 2-core machine, the
# node used 12 s of CPU (start plus the OpenSearch tests) instead of 28 s, and the tests took 39 s, not 65 s.
JVM_OPTIONS = ("-Xms512m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss1m",
               "-Dlog4j2.disable.jmx=true", "-Djava.awt.headless=true", "-Dfile.encoding=UTF-8")
BUILD_TIMEOUT = 900.0  # a first build on a fresh machine downloads ~100 MB from Maven Central
START_TIMEOUT = 240.0  # the JVM's own start, measured at ~10 s on an idle 2-core machine


class NodeUnavailable(RuntimeError):
    """The test node could not be built or started; the message says why and where the log is."""


def missing_tools() -> list[str]:
    return [tool for tool in ("java", "mvn") if shutil.which(tool) is None]


def _sources() -> Iterable[Path]:
    yield NODE_PROJECT / "pom.xml"
    yield from (path for path in (NODE_PROJECT / "src").rglob("*") if path.is_file())


def build_is_current() -> bool:
    if not (BUILT_STAMP.exists() and CLASSPATH_FILE.exists()):
        return False
    built = BUILT_STAMP.stat().st_mtime
    return all(path.stat().st_mtime <= built for path in _sources())


def build(log: Path | None = None) -> None:
    """`mvn package` when the build is missing or stale; Maven's local repository caches the downloads.
    One build at a time per checkout: two sessions starting together wait for each other."""
    TARGET.mkdir(exist_ok=True)
    with (TARGET / "build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if build_is_current():
            return
        command = ["mvn", "-B", "-q", "-Dstyle.color=never", "package"]
        with log.open("ab") if log else contextlib.nullcontext(sys.stderr) as output:
            result = subprocess.run(command, cwd=NODE_PROJECT, stdin=subprocess.DEVNULL, stdout=output,
                                    stderr=subprocess.STDOUT, timeout=BUILD_TIMEOUT, check=False)
        if result.returncode != 0:
            raise NodeUnavailable(f"`{' '.join(command)}` in {NODE_PROJECT} failed ({result.returncode})"
                                  + _tail(log))
        BUILT_STAMP.touch()


def java_command(home: Path, ready_file: Path) -> list[str]:
    classpath = [str(TARGET / "classes"), CLASSPATH_FILE.read_text().strip(),
                 str(TARGET / "plugins" / "opensearch-knn" / "*")]
    return ["java", *JVM_OPTIONS, f"-Djava.io.tmpdir={home}", "-cp", os.pathsep.join(classpath), MAIN_CLASS,
            "--home", str(home), "--ready-file", str(ready_file), "--stop-on-stdin-close"]


def _tail(log: Path | None, lines: int = 40) -> str:
    if log is None or not log.exists():
        return ""
    text = log.read_text(errors="replace").splitlines()[-lines:]
    return f"\n--- last lines of {log} ---\n" + "\n".join(text)


@dataclass
class NodeFolder:
    """What a node shares with the processes that use it: its URL once ready, or why it failed."""

    path: Path

    @property
    def url_file(self) -> Path:
        return self.path / "url"

    @property
    def failure_file(self) -> Path:
        return self.path / "failed"

    @property
    def log(self) -> Path:
        return self.path / "node.log"

    def wait_for_url(self, timeout: float = BUILD_TIMEOUT + START_TIMEOUT) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.url_file.exists():
                return self.url_file.read_text().strip()
            if self.failure_file.exists():
                raise NodeUnavailable(self.failure_file.read_text())
            time.sleep(0.1)
        raise NodeUnavailable(f"the test OpenSearch node was not ready after {timeout:.0f} s" + _tail(self.log))


def _remove_orphans(parent: Path) -> None:
    """Folders left by test sessions that were killed (their node stopped with them: it watches its stdin)."""
    for folder in parent.glob(f"{FOLDER_PREFIX}*"):
        try:
            os.kill(int((folder / "owner").read_text()), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except (OSError, ValueError):
            continue  # being created, or not ours to judge


def _memory_backed() -> str | None:
    """/dev/shm when there is one: every index create/delete fsyncs the cluster state, ~0.25 s each on this
    machine's disk and next to nothing in memory. The node's data is a few MB and thrown away."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


class ManagedNode:
    """Builds (if needed) and starts the node in a background thread; `stop()` ends it and removes its data."""

    def __init__(self) -> None:
        parent = _memory_backed()
        _remove_orphans(Path(parent or tempfile.gettempdir()))
        self.folder = NodeFolder(Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX, dir=parent)))
        (self.folder.path / "owner").write_text(str(os.getpid()))
        self.started_at = time.monotonic()
        self.ready_after: float | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="opensearch-test-node", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            build(self.folder.log)
            self._launch()
        except Exception as error:  # anything: the waiting tests must learn why, not time out
            message = error if isinstance(error, NodeUnavailable) else f"{error!r}{_tail(self.folder.log)}"
            self.folder.failure_file.write_text(str(message))

    def _launch(self) -> None:
        home = self.folder.path / "home"
        ready = self.folder.path / "url.ready"
        with self.folder.log.open("ab") as log:
            self._process = subprocess.Popen(java_command(home, ready), stdin=subprocess.PIPE, stdout=log,
                                             stderr=subprocess.STDOUT, cwd=self.folder.path)
        deadline = time.monotonic() + START_TIMEOUT
        while not ready.exists():
            if self._stopping.is_set():
                return
            if self._process.poll() is not None:
                raise NodeUnavailable(f"the test OpenSearch node exited with {self._process.returncode} before it "
                                      f"was ready" + _tail(self.folder.log))
            if time.monotonic() > deadline:
                raise NodeUnavailable(f"the test OpenSearch node did not start within {START_TIMEOUT:.0f} s"
                                      + _tail(self.folder.log))
            time.sleep(0.05)
        self.ready_after = time.monotonic() - self.started_at
        ready.replace(self.folder.url_file)

    def cpu_seconds(self) -> float | None:
        """CPU time the node's JVM has used so far (Linux), for the session's summary."""
        process = self._process
        try:
            fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split() if process else []
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK") if fields else None

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=BUILD_TIMEOUT)
        process = self._process
        if process is not None and process.poll() is None:
            assert process.stdin is not None
            process.stdin.close()  # the node's signal to shut down cleanly
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(self.folder.path, ignore_errors=True)


# -- the test session's side ------------------------------------------------------------------------------

def required() -> bool:
    """In CI a node that cannot run is a failure, never a skip; on a developer's machine without Java or
    Maven the tests that need it are skipped with that reason."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes") or os.environ.get(
        "ZENGRAM_REQUIRE_OPENSEARCH") == "1"


def selects_node_users(arguments: Iterable[str]) -> bool:
    """Whether command-line paths (`tests`, `tests/opensearch/x.py::test`, …) include a test that uses the node."""
    for argument in arguments:
        if argument.startswith("-"):
            continue
        path = Path(argument.split("::")[0]).resolve()
        if any(path == user or path in user.parents or user in path.parents for user in USERS):
            return True
    return False


def start_for_session(arguments: Iterable[str]) -> ManagedNode | None:
    """For the coordinating process: one node for the whole run, shared with workers through the environment."""
    if os.environ.get("OPENSEARCH_URL") or os.environ.get(DIR_VARIABLE) or missing_tools():
        return None
    if not selects_node_users(arguments):
        return None
    node = ManagedNode()
    os.environ[DIR_VARIABLE] = str(node.folder.path)
    return node


@functools.cache
def _own_node() -> ManagedNode:
    node = ManagedNode()
    atexit.register(node.stop)
    return node


_lock = threading.Lock()
_answer: str | NodeUnavailable | None = None


def _url() -> str:
    """Found once per process; a failure is remembered too, so later tests fail at once instead of waiting."""
    global _answer
    with _lock:
        if _answer is None:
            try:
                _answer = _find_url()
            except NodeUnavailable as error:
                _answer = error
    if isinstance(_answer, NodeUnavailable):
        raise _answer
    return _answer


def _find_url() -> str:
    external = os.environ.get("OPENSEARCH_URL")
    if external:
        return external
    shared = os.environ.get(DIR_VARIABLE)
    folder = NodeFolder(Path(shared)) if shared else _own_node().folder
    return folder.wait_for_url()


def opensearch_url() -> str:
    """The URL of a real OpenSearch: OPENSEARCH_URL, else the session's test node (started here if this process
    has none). Skips without Java/Maven on a developer's machine; fails in CI and whenever the node breaks."""
    if not os.environ.get("OPENSEARCH_URL") and missing_tools():
        reason = (f"no OpenSearch for the tests: {' and '.join(missing_tools())} not found (install Java 17+ and "
                  f"Maven, or set OPENSEARCH_URL)")
        if required():
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    try:
        return _url()
    except NodeUnavailable as error:
        pytest.fail(f"the OpenSearch test node is unavailable: {error}", pytrace=False)


def _main(arguments: list[str]) -> int:
    action = arguments[0] if arguments else "run"
    if missing_tools():
        print(f"no OpenSearch test node: {' and '.join(missing_tools())} not found (Java 17+ and Maven are needed); "
              f"{'CI requires it' if required() else 'the tests that need it will be skipped'}", file=sys.stderr)
        return 1 if required() or action == "run" else 0
    if action == "build":
        if not build_is_current():
            print(f"building the OpenSearch test node in {NODE_PROJECT} (Maven; the first build downloads "
                  f"~100 MB into ~/.m2)", file=sys.stderr, flush=True)
        build()
        return 0
    if action != "run":
        print("usage: python -m tests.opensearch_node [build | run]", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` stops it as cleanly as Ctrl-C
    node = ManagedNode()
    try:
        print(node.folder.wait_for_url(), flush=True)
        print(f"log: {node.folder.log}; Ctrl-C stops the node", flush=True)
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        node.stop()
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
