"""`make bench-local-cloud`: each function's latency in the local cloud (docs/local-cloud.md), beside the same
request served in-process by the embedded server, and the time the cloud takes to come up.

- up: `infra.local_cloud.up` timed (with `--from-nothing`, after removing this checkout's stack build, state and
  layer image, so `sam build`, the layer image and the provisioning run again; the Lambda base image is shared by
  every checkout of this machine and is left alone - its build is timed by infra/lambda-image).
- HTTP functions, through `sam local start-api` (the authorizer in front): the first call (the container's
  start, the function's init, the request) and then WARM calls, p50 / p95. The requests are the functions' sample
  events under events/ (the same ones `bench-coldstart` and `make invoke` send), with the cloud's keys.
- The functions no route reaches (schedules, state machine steps), through `sam local start-lambda`'s Invoke.
- In-process: the same HTTP requests to the embedded server (FastAPI + SQLite) in this process, warm.
The run's load average is printed at its start and end: on a shared 2-core machine it moves every figure.
Benchmarks are not run by `make test`."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
STATE_DIR = ROOT / ".local-cloud"
SAMPLE_KEY = "sample-api-key"
# Function (logical id) -> its sample event: requests with a stable answer, needing neither an LLM nor a job.
HTTP_REQUESTS = {
    "HealthFunction": "health/get_health.json",
    "MemoryFunction": "memory/get_query.json",
    "BriefingFunction": "briefing/get_briefing.json",
    "ClientsFunction": "clients/list_clients.json",
    "AdminFunction": "admin/list_keys.json",
    "EntitiesFunction": "entities/list_entities.json",
    "ExportFunction": "export/get_export.json",
    "ConsolidateFunction": "consolidate/get_status.json",
    "ChatFunction": "chat/get_history_list.json",
    "ChatDataFunction": "chat_data/get_memories.json",
    "DocumentsFunction": "documents/get_status.json",
}
INVOKED = {
    "RepairFunction": "repair/scheduled_repair.json",
    "ChatLearningFunction": "chat_learning/scheduled_sweep.json",
    "ResearchStepFunction": "research_step/retrieve.json",
    "KeyAuthorizerFunction": "authorizer/api_key.json",
}


def event(relative: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((ROOT / "events" / relative).read_text())
    return loaded


def http_request(relative: str, keys: dict[str, str]) -> dict[str, Any]:
    """The sample event as the HTTP request a client sends: method, path, query, body, its key header."""
    sample = event(relative)
    headers = {name: keys.get(name, value) for name, value in sample.get("headers", {}).items()
               if name in ("x-api-key", "x-mnexium-key", "authorization", "content-type")}
    if headers.get("authorization", "").startswith("Bearer"):
        headers["authorization"] = f"Bearer {keys['x-api-key']}"
    query = sample.get("rawQueryString", "")
    return {"method": sample["routeKey"].split(" ")[0], "url": sample["rawPath"] + (f"?{query}" if query else ""),
            "headers": headers, "content": sample.get("body") or None}


def timed(call: Callable[[], int], clock: Callable[[], float] = time.perf_counter) -> tuple[float, int]:
    started = clock()
    status = call()
    return (clock() - started) * 1000, status


def series(call: Callable[[], int], warm: int, clock: Callable[[], float] = time.perf_counter) -> dict[str, Any]:
    """The first call, then `warm` calls: their p50 and p95 (ms)."""
    first, status = timed(call, clock)
    samples = [timed(call, clock)[0] for _ in range(warm)]
    cuts = statistics.quantiles(samples, n=20)
    return {"first_ms": first, "status": status, "p50_ms": statistics.median(samples), "p95_ms": cuts[18]}


def through_api(api_url: str, keys: dict[str, str], warm: int) -> dict[str, dict[str, Any]]:
    """Each HTTP function's sample request; `keys` by header, and "admin" for the admin routes."""
    results = {}
    with httpx.Client(base_url=api_url, timeout=120) as client:
        for function, relative in HTTP_REQUESTS.items():
            own = {**keys, "x-api-key": keys["admin"]} if function == "AdminFunction" else keys
            request = http_request(relative, own)
            results[function] = series(lambda r=request: client.request(**r).status_code, warm)  # type: ignore[misc]
            print(f"  {function:24} {row(results[function])}", flush=True)
    return results


def through_lambda(lambda_url: str, warm: int) -> dict[str, dict[str, Any]]:
    from infra.local_jobs.schedules import lambda_client

    invoker = lambda_client(lambda_url)
    results = {}
    for function, relative in INVOKED.items():
        payload = (ROOT / "events" / relative).read_bytes()

        def call(name: str = function, body: bytes = payload) -> int:
            answer = invoker.invoke(FunctionName=name, Payload=body)
            answer["Payload"].read()
            return 500 if "FunctionError" in answer else int(answer["StatusCode"])

        results[function] = series(call, warm)
        print(f"  {function:24} {row(results[function])}", flush=True)
    return results


@contextmanager
def embedded_server(keys: dict[str, str]) -> Iterator[str]:
    from zengram.assembly.containers import build_container
    from zengram.embedded.app import build_embedded_app
    from zengram.embedded.background import BackgroundServer
    from zengram.settings import Settings

    folder = Path(tempfile.mkdtemp(prefix="zengram-bench-local-cloud-"))
    settings = Settings(data_dir=folder, api_key=keys["x-api-key"], rate_limit_enabled=False)
    container = build_container(settings)
    try:
        with BackgroundServer(build_embedded_app(settings, container)) as server:
            yield server.url
    finally:
        container.close()
        shutil.rmtree(folder, ignore_errors=True)


def in_process(keys: dict[str, str], warm: int) -> dict[str, dict[str, Any]]:
    with embedded_server(keys) as url:
        return through_api(url, keys, warm)


def row(result: dict[str, Any] | None) -> str:
    if not result:
        return f"{'-':>8} {'-':>8} {'-':>8} {'':>6}"
    return (f"{result['first_ms']:8.1f} {result['p50_ms']:8.1f} {result['p95_ms']:8.1f} "
            f"{result['status']:>6}")


def up(from_nothing: bool) -> tuple[dict[str, Any], float]:
    from infra import local_cloud

    if from_nothing:
        previous = local_cloud.read_state(STATE_DIR) or {}
        local_cloud.down(STATE_DIR)
        for path in (ROOT / ".aws-sam", STATE_DIR):
            shutil.rmtree(path, ignore_errors=True)
        if previous.get("invoke_image"):  # this checkout's layer image (the base image is shared: kept)
            subprocess.run(["podman", "rmi", previous["invoke_image"]], capture_output=True, check=False)
    started = time.monotonic()
    state: dict[str, Any] = local_cloud.up(STATE_DIR)
    return state, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--warm", type=int, default=20, help="warm calls per function (default 20)")
    parser.add_argument("--from-nothing", action="store_true", help="time up after removing the stack's build")
    parser.add_argument("--reuse", action="store_true", help="measure a running cloud (.local-cloud/state.json): "
                                                             "its first calls are then not cold")
    parser.add_argument("--in-process-only", action="store_true", help="only the embedded server's figures")
    options = parser.parse_args()
    if options.in_process_only:
        print(f"in-process only, load {os.getloadavg()}")
        in_process({name: "bench-local-cloud-key" for name in ("x-api-key", "x-mnexium-key", "admin")}, options.warm)
        return
    print(f"bench.local_cloud {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load {os.getloadavg()}", flush=True)
    up_seconds = None
    if options.reuse:
        state = json.loads((STATE_DIR / "state.json").read_text())
    else:
        state, up_seconds = up(options.from_nothing)
        how = " from nothing (stack build and state removed)" if options.from_nothing else ""
        print(f"up: {up_seconds:.1f} s{how}", flush=True)
    try:
        keys = {"x-api-key": state["api_key"], "x-mnexium-key": state.get("mnexium_key") or state["api_key"],
                "admin": state.get("admin_key") or state["api_key"]}
        header = f"  {'function':24} {'first':>8} {'p50':>8} {'p95':>8} {'status':>6}   (ms)"
        print("through start-api (cold first call, then warm):\n" + header, flush=True)
        cloud = through_api(state["api_url"], keys, options.warm)
        print("through start-lambda (Invoke):\n" + header, flush=True)
        invoked = through_lambda(state["lambda_url"], options.warm)
    finally:
        if not options.reuse:
            from infra import local_cloud

            local_cloud.down(STATE_DIR)
    print("in-process (embedded server, same requests):\n" + header, flush=True)
    local = in_process({name: keys["admin"] for name in keys}, options.warm)  # one key, the admin's
    print(f"\nsummary, load {os.getloadavg()}:")
    print(f"  {'function':24} {'cloud first':>12} {'p50':>8} {'p95':>8} | {'in-process p50':>14} {'p95':>8}")
    for function, result in {**cloud, **invoked}.items():
        other = local.get(function)
        print(f"  {function:24} {result['first_ms']:12.0f} {result['p50_ms']:8.1f} {result['p95_ms']:8.1f} | "
              + (f"{other['p50_ms']:14.1f} {other['p95_ms']:8.1f}" if other else f"{'-':>14} {'-':>8}"))
    if up_seconds is not None:
        print(f"  up: {up_seconds:.1f} s")


if __name__ == "__main__":
    main()
