"""Indexing jobs as executions of the documents state machine (`infra/statemachines/documents-index.asl.json`):
plan, then batches (each a Lambda invocation that stops before its time runs out) until the folder is done, then
finish. A Standard workflow runs up to a year, so no single Lambda's 15 minutes bounds a folder."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


class StepFunctionsIndexLauncher:
    """The `IndexJobLauncher` port: one execution per job, named after it (a second launch of the same job is
    refused by Step Functions rather than run twice)."""

    def __init__(self, state_machine_arn: str, *, region: str | None = None, client: Any | None = None) -> None:
        self._arn = state_machine_arn
        self._region = region
        self._client = client

    def launch(self, job_id: str, run_here: Callable[[str], object]) -> None:
        self._sfn().start_execution(stateMachineArn=self._arn, name=job_id, input=json.dumps({"job_id": job_id}))

    def close(self) -> None:
        """Nothing runs here."""

    def _sfn(self) -> Any:
        if self._client is None:
            import boto3  # type: ignore[import-untyped]

            self._client = boto3.session.Session().client("stepfunctions", region_name=self._region)
        return self._client
