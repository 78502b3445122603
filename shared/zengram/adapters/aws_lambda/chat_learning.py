"""The AWS host's `LearningDispatch`: each job id goes to an asynchronous invocation of the learning function
(InvocationType=Event, retried by Lambda itself); the job is stored already, so one Lambda drops is run by the
function's scheduled sweep."""

from __future__ import annotations

from typing import Any

from zengram.adapters.aws_lambda import LambdaJobLauncher


class LambdaLearningDispatch:
    def __init__(self, function: str, *, region: str | None = None, client: Any | None = None) -> None:
        self._launcher = LambdaJobLauncher(function, region=region, client=client)

    def dispatch(self, job_id: str) -> None:
        self._launcher.launch(job_id, lambda _: None)
