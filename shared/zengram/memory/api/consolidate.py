"""Consolidation: start a run (async job or `?sync=true`), poll a job, read the engine's status."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Response

from zengram.kernel.timestamps import format_timestamp
from zengram.memory.api.deps import ConsolidationServiceDep
from zengram.memory.api.schemas import CONFLICT
from zengram.memory.api.schemas.consolidation import (
    ConsolidationResult,
    ConsolidationStarted,
    ConsolidationStatusBody,
    JobBody,
)
from zengram.memory.domain.jobs import Job
from zengram.memory.domain.llm import LLMInfo
from zengram.web.rate_limits import refund_failed_heavy
from zengram.web.schemas import ERROR_RESPONSES, documented_error

router = APIRouter(tags=["consolidation"], responses=ERROR_RESPONSES)

UNAVAILABLE: dict[int | str, dict[str, Any]] = {
    503: documented_error("No LLM provider configured (or it could not be reached)"),
}
BAD_LLM_ANSWER: dict[int | str, dict[str, Any]] = {
    502: documented_error("?sync=true: the LLM answered without the expected JSON"),
}
JOB_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: documented_error("No such job")}


def _stamp(moment: datetime | None) -> str | None:
    return format_timestamp(moment) if moment is not None else None


def job_body(job: Job) -> JobBody:
    return JobBody(job_id=job.id, status=job.status, trigger=job.trigger, created_at=format_timestamp(job.created_at),
                   started_at=_stamp(job.started_at), finished_at=_stamp(job.finished_at),
                   result=ConsolidationResult.model_validate(job.result), error=job.error)


@router.post("/consolidate", status_code=202, response_model=None,  # each status documents its own body
             responses={202: {"model": ConsolidationStarted, "description": "Started: poll the job"},
                        200: {"model": JobBody, "description": "?sync=true: the finished job"},
                        **CONFLICT, **UNAVAILABLE, **BAD_LLM_ANSWER},
             dependencies=[Depends(refund_failed_heavy)])
def consolidate(
    consolidation: ConsolidationServiceDep,
    response: Response,
    sync: Annotated[bool, Query(description="Run now and answer when done")] = False,
) -> ConsolidationStarted | JobBody:
    if sync:
        response.status_code = 200
        return job_body(consolidation.run_now(raise_errors=True))
    return ConsolidationStarted(job_id=consolidation.start_in_background().id)


@router.get("/consolidate/job/{job_id}", response_model=JobBody, responses=JOB_NOT_FOUND)
def get_job(job_id: str, consolidation: ConsolidationServiceDep) -> JobBody:
    return job_body(consolidation.job(job_id))


@router.get("/consolidate/status", response_model=ConsolidationStatusBody)
def get_status(consolidation: ConsolidationServiceDep) -> ConsolidationStatusBody:
    status = consolidation.status()
    return ConsolidationStatusBody(
        is_running=status.is_running,
        last_run_at=_stamp(status.last_run_at),
        llm=LLMInfo(provider=status.llm_provider, model=status.llm_model),
        enabled=status.enabled, interval=status.interval, last_job_id=status.last_job_id,
    )
