"""Running a job in another invocation of a Lambda function (the AWS host). boto3 is imported lazily."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

JOB_EVENT_FIELD = "zengram_job_id"  # the event an asynchronous invocation carries: {"zengram_job_id": "<id>"}


class LambdaJobLauncher:
    """`launch` invokes `function` asynchronously (InvocationType=Event) with the job id and returns once Lambda
    has queued the event; that invocation runs the job by id. The HTTP function cannot run it itself: Lambda
    freezes the process as soon as the response is sent."""

    def __init__(self, function: str, *, region: str | None = None, client: Any | None = None) -> None:
        self._function = function
        self._region = region
        self._client = client

    def launch(self, job_id: str, run_here: Callable[[str], object]) -> None:
        response = self._lambda().invoke(FunctionName=self._function, InvocationType="Event",
                                         Payload=json.dumps({JOB_EVENT_FIELD: job_id}).encode())
        if response.get("StatusCode") != 202:
            raise RuntimeError(f"Lambda did not queue the job ({response.get('StatusCode')})")

    def _lambda(self) -> Any:
        if self._client is None:
            import boto3  # type: ignore[import-untyped]

            self._client = boto3.session.Session().client("lambda", region_name=self._region)
        return self._client


def job_id_of(event: dict[str, Any]) -> str | None:
    """The job id of an event sent by `LambdaJobLauncher`, else None."""
    job_id = event.get(JOB_EVENT_FIELD)
    return job_id if isinstance(job_id, str) and job_id else None
