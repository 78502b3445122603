"""The research loop as an AWS Step Functions execution (`infra/statemachines/research.asl.json`).

`poll` (the deployed mode) starts the execution and reads DescribeExecution until it ends or `timeout` passes,
then stops it: the research loop (up to five LLM calls) can outlast an HTTP request (API Gateway ends it at 30 s),
so the caller keeps the deadline and answers in time. It needs a Standard state machine (Express executions
cannot be described); moto runs it too. `sync` runs an Express machine with StartSyncExecution, which answers
with the result; then the machine's own TimeoutSeconds must end the run before the caller gives up.
boto3 is imported when the first run starts, never at import time. With an endpoint URL (an emulator such as
LocalStack) the client leaves out the `sync-` host prefix botocore puts before StartSyncExecution's host, which
no local endpoint answers.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable
from typing import Any, Literal

from zengram.kernel.errors import (
    FeatureUnavailable,
    IndexUnavailable,
    LLMInvalidResponse,
    LLMUnavailable,
    NotFound,
    ResearchFailed,
    ResearchTimedOut,
    ZengramError,
)
from zengram.memory.domain.research import ResearchState

# A step that raised one of these failed the execution with the class name as its error (the Lambda's
# errorType); the caller gets the same error back, so HTTP status codes match the embedded host.
STEP_ERRORS: dict[str, Callable[[str], ZengramError]] = {
    cls.__name__: cls for cls in (LLMInvalidResponse, LLMUnavailable, FeatureUnavailable, IndexUnavailable, NotFound)
}
_FIRST_POLL_SECONDS = 0.05
_MAX_POLL_SECONDS = 1.0
_ENDPOINT_VARIABLES = ("AWS_ENDPOINT_URL_SFN", "AWS_ENDPOINT_URL")
_CONNECT_SECONDS = 5.0


class StepFunctionsResearchRunner:
    """The `ResearchRunner` port on a state machine whose Task states call the research step Lambda."""

    def __init__(
        self,
        state_machine_arn: str,
        *,
        mode: Literal["sync", "poll"] = "sync",
        timeout: float = 60.0,
        region: str | None = None,
        client: Any | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._arn = state_machine_arn
        self._mode = mode
        self._timeout = timeout
        self._region = region
        self._client = client
        self._sleep = sleep

    def run(self, state: ResearchState) -> ResearchState:
        if self._mode == "sync":
            execution = self._sfn().start_sync_execution(stateMachineArn=self._arn, input=state.model_dump_json())
        else:
            execution = self._run_and_wait(state)
        return _final_state(execution)

    def _run_and_wait(self, state: ResearchState) -> dict[str, Any]:
        started = self._sfn().start_execution(
            stateMachineArn=self._arn, name=f"research-{uuid.uuid4()}", input=state.model_dump_json()
        )
        deadline = time.monotonic() + self._timeout
        pause = _FIRST_POLL_SECONDS
        while True:
            execution: dict[str, Any] = self._sfn().describe_execution(executionArn=started["executionArn"])
            if execution["status"] != "RUNNING":
                return execution
            if time.monotonic() > deadline:
                self._sfn().stop_execution(executionArn=started["executionArn"], error="ResearchTimeout")
                raise ResearchTimedOut(f"research execution did not finish within {self._timeout:g} s; "
                                       "ask for fewer max_iterations")
            self._sleep(pause)
            pause = min(pause * 2, _MAX_POLL_SECONDS)

    def _sfn(self) -> Any:
        if self._client is None:
            import boto3  # type: ignore[import-untyped]

            self._client = boto3.session.Session().client("stepfunctions", region_name=self._region,
                                                          config=client_config(self._mode, self._timeout))
        return self._client


def client_config(mode: Literal["sync", "poll"], timeout: float) -> Any:
    """StartSyncExecution holds the connection for the whole run, so the read timeout covers the run; a retried
    start would run the research twice (more LLM calls), so the sync mode never retries. Polls are idempotent."""
    from botocore.config import Config  # type: ignore[import-untyped]

    endpoint_configured = any(os.environ.get(name) for name in _ENDPOINT_VARIABLES)
    attempts = 1 if mode == "sync" else 3
    return Config(connect_timeout=_CONNECT_SECONDS, read_timeout=timeout + _CONNECT_SECONDS,
                  retries={"mode": "standard", "total_max_attempts": attempts},
                  inject_host_prefix=not endpoint_configured)


def _final_state(execution: dict[str, Any]) -> ResearchState:
    """The state the execution ended with, or the error a step raised, re-raised as the same class."""
    if execution["status"] == "SUCCEEDED":
        return ResearchState.model_validate_json(execution["output"])
    error = str(execution.get("error") or execution["status"])
    message = _error_message(execution.get("cause"))
    if error in STEP_ERRORS:
        raise STEP_ERRORS[error](message or error)
    detail = f"{error}: {message}" if message else error
    failure = ResearchTimedOut if execution["status"] == "TIMED_OUT" else ResearchFailed
    raise failure(f"research execution {execution['status'].lower()}: {detail}")


def _error_message(cause: str | None) -> str:
    """A Lambda error's cause is its JSON payload ({"errorMessage", "errorType", ...}); other causes are text."""
    if not cause:
        return ""
    try:
        payload = json.loads(cause)
    except ValueError:
        return cause
    return str(payload.get("errorMessage", cause)) if isinstance(payload, dict) else cause
