"""The template's scheduled jobs, fired locally: every `ScheduleV2` event of template.yaml (repair sweep,
consolidation, chat learning) read from the template itself - expression, state, target function, input - and
delivered to that function through a Lambda API (`sam local start-lambda`), as EventBridge Scheduler delivers it:
an asynchronous invocation (`InvocationType=Event`) with the schedule's Input, or `{}` when it has none.

Why not LocalStack's or moto's Scheduler: both store schedules (CreateSchedule, GetSchedule) but never fire them
(LocalStack's Scheduler is moto's backend), so a schedule created there would never reach a function.
`Ticker` is the clock that fires them here: each enabled `rate(...)` schedule every period; `cron(...)` schedules
are listed but fired only by hand (`fire`)."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.local_jobs.template import Resolver, load

RATE = re.compile(r"rate\((\d+) (minute|minutes|hour|hours|day|days)\)")
UNIT_SECONDS = {"minute": 60, "hour": 3600, "day": 86400}


@dataclass(frozen=True)
class Schedule:
    """One ScheduleV2 event of the template, resolved for given parameters."""

    function: str  # the target function's logical id (what `sam local start-lambda` knows it by)
    event: str  # the event's name under the function's Events
    expression: str
    enabled: bool
    payload: str  # the Input, as EventBridge Scheduler sends it

    @property
    def name(self) -> str:
        return f"{self.function}.{self.event}"

    @property
    def period(self) -> float | None:
        """Seconds between firings for a rate expression; None for cron and at expressions."""
        match = RATE.fullmatch(self.expression.strip())
        if not match:
            return None
        return int(match.group(1)) * UNIT_SECONDS[match.group(2).rstrip("s")]


def read_schedules(template: Path | None = None, parameters: dict[str, str] | None = None) -> list[Schedule]:
    """Every ScheduleV2 event of the template's functions (that the parameters create), in template order."""
    document = load(template)
    resolver = Resolver(document, parameters or {})
    found = []
    for logical_id, resource in document["Resources"].items():
        if resource.get("Type") != "AWS::Serverless::Function" or not resolver.creates(resource):
            continue
        for event_name, event in resource["Properties"].get("Events", {}).items():
            if event.get("Type") != "ScheduleV2":
                continue
            properties = resolver.resolve(event["Properties"])
            payload = properties.get("Input", "{}")
            found.append(Schedule(function=logical_id, event=event_name,
                                  expression=str(properties["ScheduleExpression"]),
                                  enabled=properties.get("State", "ENABLED") == "ENABLED",
                                  payload=payload if isinstance(payload, str) else json.dumps(payload)))
    return found


def lambda_client(lambda_url: str, timeout: float = 900.0) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client("lambda", endpoint_url=lambda_url, region_name="us-east-1", aws_access_key_id="local",
                        aws_secret_access_key="local",
                        config=Config(read_timeout=timeout, retries={"total_max_attempts": 1}))


def fire(schedule: Schedule, lambda_url: str, *, wait: bool = False) -> dict[str, Any]:
    """Delivers the schedule's payload to its function. As Scheduler does (an Event invocation) by default: the
    answer is the status (202). With `wait`, a RequestResponse invocation: the function's answer, decoded, and its
    FunctionError if it raised."""
    client = lambda_client(lambda_url)
    response = client.invoke(FunctionName=schedule.function, Payload=schedule.payload.encode(),
                             InvocationType="RequestResponse" if wait else "Event")
    outcome: dict[str, Any] = {"status": response["StatusCode"]}
    if wait:
        body = response["Payload"].read()
        outcome["answer"] = json.loads(body) if body else None
        if "FunctionError" in response:
            outcome["error"] = response["FunctionError"]
    return outcome


class Ticker:
    """Fires each enabled rate schedule once per period, the first firing one period after start."""

    def __init__(self, schedules: list[Schedule], deliver: Callable[[Schedule], Any],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._deliver = deliver
        self._clock = clock
        start = clock()
        self._due = {s.name: start + s.period for s in schedules if s.enabled and s.period}
        self._schedules = {s.name: s for s in schedules}
        self._stop = threading.Event()
        self.fired: list[str] = []

    def run_pending(self) -> list[str]:
        """Fires what is due now; returns the names fired."""
        now = self._clock()
        fired = []
        for name, due in sorted(self._due.items(), key=lambda item: item[1]):
            if due <= now:
                schedule = self._schedules[name]
                self._due[name] = now + (schedule.period or 0)
                try:
                    self._deliver(schedule)
                except Exception as error:  # a failed delivery does not stop the clock (Scheduler: retry, DLQ)
                    print(f"schedule {name}: delivery failed: {error}", flush=True)
                fired.append(name)
        self.fired += fired
        return fired

    def run(self, tick: float = 1.0) -> None:
        while not self._stop.wait(tick):
            self.run_pending()

    def stop(self) -> None:
        self._stop.set()


def _state_lambda_url() -> str | None:
    from infra.local_jobs.template import REPO_ROOT

    state = REPO_ROOT / ".local-cloud" / "state.json"
    if not state.exists():
        return None
    url = json.loads(state.read_text()).get("lambda_url")
    return str(url) if url else None


def main(arguments: list[str] | None = None) -> int:
    """`list`, `fire NAME [--wait]` (NAME: Function.Event, or the function's logical id) or `run` (the clock)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m infra.local_jobs.schedules", description=main.__doc__)
    parser.add_argument("command", choices=("list", "fire", "run"))
    parser.add_argument("name", nargs="?")
    parser.add_argument("--wait", action="store_true", help="fire: invoke RequestResponse and print the answer")
    parser.add_argument("--lambda-url", default=None, help="default: lambda_url of .local-cloud/state.json")
    parser.add_argument("--parameter", action="append", default=[], help="Name=Value, as sam --parameter-overrides")
    options = parser.parse_args(arguments)
    parameters = dict(item.split("=", 1) for item in options.parameter)
    schedules = read_schedules(parameters=parameters)
    if options.command == "list":
        for s in schedules:
            print(f"{s.name:48} {s.expression:20} {'ENABLED' if s.enabled else 'DISABLED'}  input {s.payload}")
        return 0
    lambda_url = options.lambda_url or _state_lambda_url()
    if not lambda_url:
        parser.error("no --lambda-url and no running local cloud (.local-cloud/state.json)")
    if options.command == "fire":
        chosen = [s for s in schedules if options.name in (s.name, s.function)]
        if len(chosen) != 1:
            parser.error(f"name one of: {', '.join(s.name for s in schedules)}")
        print(json.dumps(fire(chosen[0], lambda_url, wait=options.wait)))
        return 0
    ticker = Ticker(schedules, lambda s: print(s.name, fire(s, lambda_url), flush=True))
    print("firing", [(s.name, s.period) for s in schedules if s.enabled and s.period], flush=True)
    ticker.run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
