"""The local cloud's scheduled jobs and state machines (docs/local-cloud.md, "Schedules and state machines").

`start(state_dir, lambda_url)` is called by the local cloud before it starts `sam local start-api` and
`start-lambda`: it starts moto's Step Functions (its Tasks sent to `lambda_url`), creates the template's state
machines there, and starts the schedule clock (a process firing the template's ScheduleV2 events into
`lambda_url`). What it answers goes into the cloud's state; `parameter_overrides(jobs)` and
`variables(jobs)` are what `sam local` needs for the functions that start executions. `stop(jobs)` ends both
processes. Only the port of `lambda_url` needs to be known at start: nothing is invoked before a request."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from infra.local_jobs import step_functions

CONTAINER_HOST = "host.containers.internal"  # how the functions' containers reach this machine (podman)


def start(state_dir: Path, lambda_url: str, *, parameters: dict[str, str] | None = None,
          region: str = step_functions.REGION, ticker: bool = True) -> dict[str, Any]:
    """Starts the Step Functions emulator (machines created) and, with `ticker`, the schedule clock."""
    state_dir.mkdir(parents=True, exist_ok=True)
    process, sfn_url = step_functions.start_emulator(lambda_url, state_dir / "stepfunctions.log")
    jobs: dict[str, Any] = {"sfn_url": sfn_url, "sfn_pid": process.pid, "region": region,
                            "sfn_url_from_containers": sfn_url.replace("127.0.0.1", CONTAINER_HOST)}
    try:
        machines = step_functions.read_machines(parameters=parameters)
        jobs["state_machines"] = step_functions.create_machines(sfn_url, machines, region=region)
        if ticker:
            jobs["ticker_pid"] = start_ticker(state_dir, lambda_url, parameters or {})
    except Exception:
        stop(jobs)
        raise
    return jobs


def start_ticker(state_dir: Path, lambda_url: str, parameters: dict[str, str]) -> int:
    command = [sys.executable, "-m", "infra.local_jobs.schedules", "run", "--lambda-url", lambda_url,
               *[f"--parameter={name}={value}" for name, value in parameters.items()]]
    with (state_dir / "schedules.log").open("ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                   cwd=step_functions.REPO_ROOT,
                                   env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    return process.pid


def stop(jobs: dict[str, Any]) -> None:
    """Ends the processes `start` started (each its own process group); a process already gone is fine."""
    for key in ("ticker_pid", "sfn_pid"):
        pid = jobs.get(key)
        if not pid:
            continue
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        with contextlib.suppress(ChildProcessError):  # not our child (another process started it): signalled
            os.waitpid(pid, 0)


def parameter_overrides(jobs: dict[str, Any]) -> dict[str, str]:
    """Template parameters for `sam local`: the Step Functions endpoint, research served."""
    return {"StepFunctionsEndpointUrl": jobs["sfn_url_from_containers"], "ResearchEnabled": "true"}


def variables(jobs: dict[str, Any]) -> dict[str, str]:
    """`--env-vars` values: the state machine ARNs (the template's `!Ref` of a state machine has no local value).
    Only the functions that declare them (ResearchFunction, DocumentsFunction) receive them."""
    machines = jobs["state_machines"]
    return {"ZENGRAM_RESEARCH_STATE_MACHINE_ARN": machines["ResearchStateMachine"],
            "ZENGRAM_DOCUMENTS_STATE_MACHINE_ARN": machines["DocumentsIndexStateMachine"]}
