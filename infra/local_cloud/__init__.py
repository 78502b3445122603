"""The serverless stack on this machine (`make local-cloud`, docs/local-cloud.md): every function of template.yaml in
its Lambda container behind `sam local start-api` (and `start-lambda`), DynamoDB/S3/SQS/Secrets Manager on moto's
server, the search index on the real OpenSearch node, embeddings from a local OpenAI-compatible MiniLM server.

    python -m infra.local_cloud up | down | status      # or, from Python (pytest fixtures):
    state = infra.local_cloud.up(state_dir)              # idempotent; returns the state (also state_dir/state.json)
    infra.local_cloud.down(state_dir)                    # stops everything `up` started

The emulators listen on 0.0.0.0 (the containers reach the host at host.containers.internal); the APIs the callers
use are on 127.0.0.1. Ports are picked free at start (ZENGRAM_LOCAL_CLOUD_API_PORT fixes start-api's).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from infra import local_jobs
from infra.local_cloud import processes, provision, sam

ROOT = sam.ROOT
DEFAULT_STATE_DIR = ROOT / ".local-cloud"
CONTAINER_HOST = "host.containers.internal"  # the host, seen from a podman container
STOP_ORDER = ("schedules", "stepfunctions", "start_api", "start_lambda", "embeddings", "opensearch", "moto")
API_READY_TIMEOUT = 600.0  # the first /health starts a container and, on a cold machine, builds SAM's layer image


def state_file(state_dir: Path) -> Path:
    return Path(state_dir) / "state.json"


def read_state(state_dir: Path = DEFAULT_STATE_DIR) -> dict[str, Any] | None:
    path = state_file(state_dir)
    return json.loads(path.read_text()) if path.exists() else None


def status(state_dir: Path = DEFAULT_STATE_DIR) -> dict[str, Any]:
    """Which of the recorded processes run, and whether the API answers /health."""
    state = read_state(state_dir)
    if state is None:
        return {"running": False, "processes": {}}
    running = {name: processes.alive(pid) for name, pid in state["pids"].items()}
    healthy = all(running.values()) and processes.answers(f"{state['api_url']}/health", timeout=60)
    return {"running": healthy, "processes": running, "api_url": state["api_url"]}


def up(state_dir: Path = DEFAULT_STATE_DIR, *, env: dict[str, str] | None = None, warm: str = "LAZY") -> dict[str, Any]:
    """Starts the local cloud, or returns the state of the one already running from this state folder. `env`: extra
    variables for every function (e.g. ZENGRAM_LLM_BASE_URL of a scripted LLM); they must be declared by the
    template. `warm`: SAM's --warm-containers (LAZY: each function's container starts on its first call)."""
    state_dir = Path(state_dir).resolve()
    existing = read_state(state_dir)
    if existing is not None and status(state_dir)["running"]:
        return existing
    down(state_dir)
    state_dir.mkdir(parents=True, exist_ok=True)
    logs = state_dir / "logs"
    started = time.monotonic()
    timings: dict[str, float] = {}
    state: dict[str, Any] = {"pids": {}, "state_dir": str(state_dir), "logs": str(logs)}
    try:
        _start(state, state_dir, logs, timings, env or {}, warm)
    except BaseException:
        _save(state_dir, state)
        down(state_dir)
        raise
    timings["total_seconds"] = round(time.monotonic() - started, 1)
    state["timings"] = timings
    _save(state_dir, state)
    return state


def _start(state: dict[str, Any], state_dir: Path, logs: Path, timings: dict[str, float], env: dict[str, str],
           warm: str) -> None:
    mark = time.monotonic()
    host = sam.docker_host()
    sam.ensure_base_image(host)
    state["docker_host"] = host
    timings["engine_and_image_seconds"] = round(time.monotonic() - mark, 1)
    mark = time.monotonic()
    built = sam.build(logs / "sam-build.log")
    timings["sam_build_seconds"] = round(built if built is not None else 0.0, 1)
    timings["sam_build_skipped"] = built is None
    mark = time.monotonic()
    state["invoke_image"] = sam.layer_image(host)
    state["template"] = str(sam.local_template())
    timings["layer_image_seconds"] = round(time.monotonic() - mark, 1)

    ports = {name: processes.free_port() for name in ("moto", "opensearch", "embeddings", "lambda")}
    ports["api"] = int(os.environ.get("ZENGRAM_LOCAL_CLOUD_API_PORT") or processes.free_port())
    python_env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)])}
    mark = time.monotonic()
    pids = state["pids"]
    # S3 path-style for the host name containers use (moto would take "host" for a bucket in a virtual-host name).
    moto_env = {**python_env, "S3_IGNORE_SUBDOMAIN_BUCKETNAME": "true",
                "MOTO_S3_CUSTOM_ENDPOINTS": f"http://{CONTAINER_HOST}:{ports['moto']}"}
    pids["moto"] = processes.start("moto", [sys.executable, "-m", "infra.local_cloud.moto_server", "--host", "0.0.0.0",
                                            "--port", str(ports["moto"])], logs, env=moto_env, cwd=ROOT)
    pids["opensearch"] = _start_opensearch(ports["opensearch"], state_dir, logs)
    pids["embeddings"] = processes.start("embeddings", [sys.executable, "-m", "infra.local_cloud.embeddings_server",
                                                        "--host", "0.0.0.0", "--port", str(ports["embeddings"])],
                                         logs, env=python_env, cwd=ROOT)
    local = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
    inside = {name: f"http://{CONTAINER_HOST}:{port}" for name, port in ports.items()}
    state.update({"api_url": local["api"], "lambda_url": local["lambda"], "moto_url": local["moto"],
                  "dynamodb_url": local["moto"], "opensearch_url": local["opensearch"],
                  "embeddings_url": f"{local['embeddings']}/v1", "container_urls": inside, "region": provision.REGION})
    processes.wait_until(lambda: processes.answers(local["moto"]), what="moto", timeout=60, pid=pids["moto"],
                         log=logs / "moto.log")
    processes.wait_until(lambda: processes.answers(local["opensearch"]), what="the OpenSearch node", timeout=240,
                         pid=pids["opensearch"], log=logs / "opensearch.log")
    processes.wait_until(lambda: processes.answers(f"{local['embeddings']}/health"), what="the embeddings server",
                         timeout=120, pid=pids["embeddings"], log=logs / "embeddings.log")
    timings["emulators_seconds"] = round(time.monotonic() - mark, 1)

    api_key = secrets.token_urlsafe(32)
    provision.create_resources(local["moto"], api_key)
    state.update({"api_key": api_key, "admin_key": api_key, "stage": "local",
                  "tables": {"memory": provision.MEMORY_TABLE, "documents": provision.DOCUMENTS_TABLE},
                  "documents_bucket": provision.DOCUMENTS_BUCKET, "api_key_secret": provision.API_KEY_SECRET})
    # The template's schedules and state machines (infra/local_jobs): Step Functions with its Tasks sent to
    # start-lambda, the machines created, the schedule clock; the functions that start executions learn where.
    jobs = local_jobs.start(state_dir, local["lambda"], region=provision.REGION)
    pids["stepfunctions"], pids["schedules"] = jobs.pop("sfn_pid"), jobs.pop("ticker_pid")
    state.update(jobs)
    variables = {**function_environment(inside), **local_jobs.variables(jobs), **env}
    env_vars = state_dir / "env-vars.json"
    sam.write_env_vars(env_vars, variables)
    overrides = sam.parameter_overrides(inside["moto"], inside["lambda"], embeddings_url=f"{inside['embeddings']}/v1")
    overrides += [f"{name}={value}" for name, value in local_jobs.parameter_overrides(jobs).items()]
    state.update({"env_vars_file": str(env_vars), "parameter_overrides": overrides})
    _save(state_dir, state)

    mark = time.monotonic()
    sam_env = sam.sam_env(state["docker_host"])
    servers = (("start-lambda", "start_lambda", ports["lambda"]), ("start-api", "start_api", ports["api"]))
    for kind, name, port in servers:
        command = sam.local_command(kind, port, env_vars=env_vars, overrides=overrides, image=state["invoke_image"],
                                    warm=warm)
        pids[name] = processes.start(name, command, logs, env=sam_env, cwd=ROOT)
    processes.wait_until(lambda: processes.answers(local["lambda"]), what="sam local start-lambda", timeout=120,
                         pid=pids["start_lambda"], log=logs / "start_lambda.log")
    _save(state_dir, state)
    provision.bootstrap_search_index(local["moto"], inside["moto"], local["lambda"], state["stage"])
    timings["index_bootstrap_seconds"] = round(time.monotonic() - mark, 1)
    mark = time.monotonic()
    processes.wait_until(lambda: _healthy(local["api"]), what="sam local start-api (/health)",
                         timeout=API_READY_TIMEOUT, pid=pids["start_api"], log=logs / "start_api.log")
    timings["api_ready_seconds"] = round(time.monotonic() - mark, 1)


def function_environment(inside: dict[str, str]) -> dict[str, str]:
    """The values every function gets (--env-vars): the emulators, as the containers reach them."""
    return {
        "ZENGRAM_OPENSEARCH_URL": inside["opensearch"],
        "ZENGRAM_OPENSEARCH_AUTH": "none",
        "ZENGRAM_EMBEDDER": "openai",
        "ZENGRAM_OPENAI_BASE_URL": f"{inside['embeddings']}/v1",
        "ZENGRAM_OPENAI_API_KEY_SECRET_ID": provision.OPENAI_KEY_SECRET,
        "ZENGRAM_EMBEDDING_MODEL": "all-MiniLM-L6-v2",
        "ZENGRAM_EMBEDDING_DIMENSIONS": "384",
        "ZENGRAM_DOCUMENTS_ALLOWED_ROOTS": f"s3://{provision.DOCUMENTS_BUCKET}",
        "AWS_ENDPOINT_URL": inside["moto"],
        "AWS_ENDPOINT_URL_LAMBDA": inside["lambda"],
        "POWERTOOLS_TRACE_DISABLED": "true",
    }


def _healthy(api_url: str) -> bool:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"{api_url}/health", timeout=60) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _start_opensearch(port: int, state_dir: Path, logs: Path) -> int:
    """The test node (tests/opensearch_node.py: built by Maven when stale) with HTTP on 0.0.0.0, data in the state
    folder; no --stop-on-stdin-close (it outlives `up`), stopped by SIGTERM."""
    from tests import opensearch_node

    opensearch_node.build(logs / "opensearch-build.log")
    home = state_dir / "opensearch"
    command = [part for part in opensearch_node.java_command(home, state_dir / "opensearch.ready")
               if part != "--stop-on-stdin-close"]
    return processes.start("opensearch", [*command, "--port", str(port), "--http-host", "0.0.0.0"], logs, cwd=state_dir)


def down(state_dir: Path = DEFAULT_STATE_DIR) -> None:
    """Stops what `up` started from this state folder and removes the function containers SAM left."""
    state_dir = Path(state_dir).resolve()
    state = read_state(state_dir)
    if state is not None:
        for name in STOP_ORDER:
            pid = state.get("pids", {}).get(name)
            if pid:
                processes.stop(pid)
        host = state.get("docker_host")
        if host:
            remove_containers(host)
        state_file(state_dir).unlink(missing_ok=True)
        (state_dir / "opensearch.ready").unlink(missing_ok=True)


def remove_containers(host: str) -> list[str]:
    """The Lambda containers SAM started from this checkout's build (their code is mounted from it): other
    checkouts' containers on the same engine are left alone."""
    del host  # the podman CLI shares the rootful service's storage
    listed = subprocess.run(["podman", "ps", "-a", "-q", "--filter", "label=sam.cli.container.type=lambda"],
                            capture_output=True, text=True, check=False)
    removed = []
    for container in listed.stdout.split():
        mounts = subprocess.run(["podman", "inspect", "--format", "{{range .Mounts}}{{.Source}} {{end}}", container],
                                capture_output=True, text=True, check=False).stdout
        if str(sam.BUILD_DIR) in mounts:
            subprocess.run(["podman", "rm", "-f", container], capture_output=True, check=False)
            removed.append(container)
    return removed


def _save(state_dir: Path, state: dict[str, Any]) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    partial = state_file(state_dir).with_suffix(".partial")
    partial.write_text(json.dumps(state, indent=2) + "\n")
    partial.replace(state_file(state_dir))
