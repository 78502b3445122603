"""`make bench-coldstart`: each function's init and first request, as Lambda runs them, against a bare FastAPI +
Mangum handler on the same runtime, in one run.

With the layer built by `make package` and a local python3.13 (the functions' runtime), every measurement is a fresh
interpreter that imports a function exactly as Lambda's init does (layer on sys.path, function folder as the code
root, precompiled bytecode, the runtime's boto3 beside it), then handles one sample event. Otherwise the dev venv's
interpreter is used and the report says so. Rounds interleave every subject, so load that drifts during the run
falls on the baseline and the functions alike; figures are medians over the rounds.

- init: the import of the function module (what Lambda's init runs; the interpreter's own start is left out), and
  its ratio to the baseline's. Target (#18 §5): at most 1.3x.
- first request, on demand: an init of type on-demand, then the first sample event: what a cold start without
  SnapStart costs the first caller, beyond the init.
- first request, primed: an init of type snap-start, which primes the function (container, clients, tracer, secret)
  as it does before the snapshot; the first event then shows what a caller waits after a restore (less the restore
  itself and the new connections, which cannot be measured here).
The first requests reach DynamoDB on a local moto server and the embedded search index; the key is BRAIN_API_KEY.

`--import-work` (`make bench-coldstart ARGS='--import-work --runs 6'`) measures instead, for each subject, the sum
over modules of the least self time `python -X importtime -c "import app"` reports over the rounds: on a loaded
machine, where wall-clock inits mostly measure waiting for a core, it is the steadier figure of the import work.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYER_SITE = ROOT / "build" / "layer" / "python"
BASELINE = ROOT / "bench" / "coldstart_baseline"
INIT_TARGET_RATIO = 1.3
FUNCTIONS = sorted(path.name for path in (ROOT / "functions").iterdir() if (path / "app.py").is_file())
# A sample event per function whose first request needs neither an embedding provider nor an LLM.
FIRST_REQUESTS = {
    "health": "health/get_health.json",
    "memory": "memory/get_query.json",
    "briefing": "briefing/get_briefing.json",
    "clients": "clients/list_clients.json",
    "admin": "admin/list_keys.json",
    "entities": "entities/list_entities.json",
    "export": "export/get_export.json",
    "authorizer": "authorizer/api_key.json",
    "chat": "chat/get_history_list.json",
    "chat_data": "chat_data/get_memories.json",
}
SAMPLE_KEY = "sample-api-key"
RUNTIME_PACKAGES = ("boto3", "botocore", "s3transfer")  # what the Lambda runtime itself provides

# Run in the measured interpreter: import the handler module, then (with an event) call it twice.
PROBE = """
import json, sys, time
started = time.perf_counter()
import app
imported = time.perf_counter()
result = {"init_ms": (imported - started) * 1000}
if len(sys.argv) > 1:
    class Context:
        function_name = "bench"; function_version = "1"; memory_limit_in_mb = 1024
        invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:bench"
        aws_request_id = "bench"; log_group_name = "/aws/lambda/bench"; log_stream_name = "bench"
        def get_remaining_time_in_millis(self): return 29000
    event = json.load(open(sys.argv[1]))
    for name in ("first_ms", "second_ms"):
        before = time.perf_counter()
        answer = app.handler(json.loads(json.dumps(event)), Context())
        result[name] = (time.perf_counter() - before) * 1000
    result["status"] = answer.get("statusCode", answer.get("isAuthorized"))
print(json.dumps(result))
"""


@dataclass(frozen=True)
class Subject:
    name: str
    code_root: Path
    event: Path | None = None


def runtime_interpreter() -> str | None:
    """The real path of a local python3.13 (not a pyenv shim, whose start-up would be measured too)."""
    probe = subprocess.run(["env", "PYENV_VERSION=3.13.0", "python3.13", "-c", "import sys; print(sys.executable)"],
                           capture_output=True, text=True, check=False)
    return probe.stdout.strip() if probe.returncode == 0 else None


def runtime_site() -> Path:
    """A folder holding only the runtime-provided packages (linked from the dev venv), like /var/runtime."""
    folder = ROOT / "build" / "runtime-site"
    folder.mkdir(parents=True, exist_ok=True)
    venv_site = next((ROOT / ".venv" / "lib").glob("python3*/site-packages"))
    for name in RUNTIME_PACKAGES:
        link = folder / name
        if not link.exists():
            link.symlink_to(venv_site / name)
    return folder


def interpreter(dev_venv: bool = False) -> tuple[str, list[str], str]:
    """The interpreter, the path entries after the code root, and a description of what is measured."""
    python = None if dev_venv else runtime_interpreter()
    if LAYER_SITE.is_dir() and python:
        return python, [str(LAYER_SITE), str(runtime_site())], "python3.13 + the packaged layer, as on Lambda"
    # This checkout's package first (a worktree may share a venv installed from another checkout).
    return (str(ROOT / ".venv" / "bin" / "python"), [str(ROOT / "shared")],
            "dev venv python (run `make package` for the layer)")


@contextmanager
def moto_dynamodb() -> Iterator[str]:
    """A local moto server for the first requests' DynamoDB reads; stopped on exit."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([str(ROOT / ".venv" / "bin" / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


def environment(path: list[str], code_root: Path, dynamodb: str, data_dir: Path, init_type: str) -> dict[str, str]:
    """What template.yaml gives a function, pointed at the local stand-ins."""
    kept = {name: value for name, value in os.environ.items()
            if name in ("PATH", "HOME", "LANG") or name.startswith("PYENV")}
    return {**kept, "PYTHONPATH": os.pathsep.join([str(code_root), *path]), "AWS_REGION": "eu-west-1",
            "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_ENDPOINT_URL_DYNAMODB": dynamodb,
            "AWS_LAMBDA_FUNCTION_NAME": "bench", "AWS_LAMBDA_INITIALIZATION_TYPE": init_type,
            "POWERTOOLS_TRACE_DISABLED": "false", "POWERTOOLS_METRICS_NAMESPACE": "Bench",
            "POWERTOOLS_LOG_LEVEL": "WARNING", "BRAIN_API_KEY": SAMPLE_KEY, "ZENGRAM_RECORD_STORE": "dynamodb",
            "ZENGRAM_DYNAMODB_TABLE": "zengram-bench", "ZENGRAM_DYNAMODB_CREATE_TABLE": "true",
            "ZENGRAM_SEARCH_INDEX": "embedded", "ZENGRAM_EMBEDDER": "bedrock", "ZENGRAM_DATA_DIR": str(data_dir),
            "ZENGRAM_RATE_LIMIT_ENABLED": "false"}


def measure(python: str, env: dict[str, str], event: Path | None) -> dict[str, float]:
    arguments = [python, "-c", PROBE, *([str(event)] if event else [])]
    result = subprocess.run(arguments, env=env, capture_output=True, text=True, check=False,
                            cwd=env["PYTHONPATH"].split(os.pathsep)[0])
    if result.returncode != 0:
        raise SystemExit(f"{arguments[-1] if event else env['PYTHONPATH']} failed:\n{result.stderr[-3000:]}")
    figures: dict[str, float] = json.loads(result.stdout.strip().splitlines()[-1])
    return figures


def import_times(python: str, env: dict[str, str]) -> dict[str, int]:
    """One fresh `python -X importtime -c "import app"`: each module's self import time, in microseconds."""
    result = subprocess.run([python, "-X", "importtime", "-c", "import app"], env=env, capture_output=True, text=True,
                            check=False, cwd=env["PYTHONPATH"].split(os.pathsep)[0])
    if result.returncode != 0:
        raise SystemExit(f"{env['PYTHONPATH']} failed:\n{result.stderr[-3000:]}")
    selves: dict[str, int] = {}
    for line in result.stderr.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if line.startswith("import time:") and len(fields) == 3 and fields[0].strip().isdigit():
            selves[fields[2].strip()] = int(fields[0])
    return selves


def import_work(python: str, path: list[str], subjects: list[Subject], runs: int) -> None:
    """Each subject's import work: the sum over modules of the least self import time seen in `runs` interleaved
    runs. Waiting for a core inflates some runs' figures, rarely all of them: this is steadier than wall-clock init
    on a loaded machine, though it leaves out what happens outside imports (building the app, the handler)."""
    least: dict[str, dict[str, int]] = {subject.name: {} for subject in subjects}
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(runs):
            for subject in subjects:
                env = environment(path, subject.code_root, "http://127.0.0.1:9", Path(scratch), "on-demand")
                for module, micros in import_times(python, env).items():
                    least[subject.name][module] = min(micros, least[subject.name].get(module, micros))
    work = {name: sum(selves.values()) / 1000 for name, selves in least.items()}
    base = work[subjects[0].name]
    print(f"  {'import work (sum of least self times)':<42} {'ms':>7} {'x bare':>7}   target <= {INIT_TARGET_RATIO}x")
    for subject in subjects:
        verdict = "" if subject is subjects[0] else "OK" if work[subject.name] <= INIT_TARGET_RATIO * base else "over"
        label = subject.name if subject is subjects[0] else f"functions/{subject.name}"
        print(f"  {label:<42} {work[subject.name]:7.1f} {work[subject.name] / base:7.2f}   {verdict}")


def median(runs: list[dict[str, float]], name: str) -> float:
    return statistics.median(run[name] for run in runs)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.coldstart", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="rounds (fresh processes per subject and mode)")
    parser.add_argument("--functions", default=",".join(FUNCTIONS), help="the functions measured, comma-separated")
    parser.add_argument("--smoke", action="store_true",
                        help="a check that the run works (python -m bench.smoke coldstart): one round of the health "
                             "function against the bare handler on the dev venv, no `make package` needed")
    parser.add_argument("--import-work", action="store_true",
                        help="instead of wall-clock init and first requests, each function's import work: the sum "
                             "over modules of the least self time of `python -X importtime` over the rounds")
    args = parser.parse_args(argv)
    if args.smoke:
        args.runs, args.functions = 1, "health"
    names = [name.strip() for name in args.functions.split(",") if name.strip()]
    if not names or set(names) - set(FUNCTIONS):
        parser.error(f"--functions takes names from {', '.join(FUNCTIONS)}")
    python, path, description = interpreter(dev_venv=args.smoke)
    subjects = [Subject(name, ROOT / "functions" / name, ROOT / "events" / FIRST_REQUESTS[name]
                        if name in FIRST_REQUESTS else None) for name in names]
    baseline = Subject("bare FastAPI + Mangum", BASELINE)
    load_before = os.getloadavg()
    statistic = "least" if args.import_work else "median"
    print(f"cold start, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC: {description}; {statistic} of {args.runs} rounds; "
          f"load average {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f} (2 cores)")
    if args.import_work:
        import_work(python, path, [baseline, *subjects], args.runs)
        load_after = os.getloadavg()
        print(f"  load average at the end {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")
        return
    inits: dict[str, list[dict[str, float]]] = {}
    firsts: dict[tuple[str, str], list[dict[str, float]]] = {}
    with moto_dynamodb() as dynamodb, tempfile.TemporaryDirectory() as scratch:
        data_dir = Path(scratch)
        warm = environment(path, subjects[0].code_root, dynamodb, data_dir, "on-demand")
        measure(python, {**warm, "PYTHONPATH": os.pathsep.join([str(ROOT / "functions" / "memory"), *path])},
                ROOT / "events" / FIRST_REQUESTS["memory"])  # creates the table, warms the file cache
        for _ in range(args.runs):
            for subject in [baseline, *subjects]:
                env = environment(path, subject.code_root, dynamodb, data_dir, "on-demand")
                inits.setdefault(subject.name, []).append(measure(python, env, None))
                if subject.event is None:
                    continue
                for init_type in ("on-demand", "snap-start"):
                    env = environment(path, subject.code_root, dynamodb, data_dir, init_type)
                    firsts.setdefault((subject.name, init_type), []).append(measure(python, env, subject.event))
    base = median(inits[baseline.name], "init_ms")
    print(f"  {'init (import of the handler module)':<42} {'ms':>7} {'x bare':>7}   target <= {INIT_TARGET_RATIO}x")
    print(f"  {baseline.name:<42} {base:7.1f} {1.0:7.2f}")
    for subject in subjects:
        init = median(inits[subject.name], "init_ms")
        verdict = "OK" if init <= INIT_TARGET_RATIO * base else "over"
        print(f"  functions/{subject.name:<32} {init:7.1f} {init / base:7.2f}   {verdict}")
    print(f"  {'first request (second in brackets), ms':<42} {'on-demand init':>22} {'primed (snap-start)':>22}")
    for subject in subjects:
        if subject.event is None:
            continue
        cells = []
        for init_type in ("on-demand", "snap-start"):
            runs = firsts[(subject.name, init_type)]
            first, second, init = (median(runs, name) for name in ("first_ms", "second_ms", "init_ms"))
            cells.append(f"{first:7.1f} ({second:5.1f}) init {init:6.1f}")
        print(f"  functions/{subject.name:<32} {cells[0]:>22}   {cells[1]:>22}")
    load_after = os.getloadavg()
    print(f"  load average at the end {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")


if __name__ == "__main__":
    main()
