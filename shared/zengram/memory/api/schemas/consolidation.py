"""Consolidation bodies (/consolidate)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from zengram.memory.domain.jobs import JobStatus, JobTrigger
from zengram.memory.domain.llm import LLMInfo
from zengram.web.schemas import left_out

# -- consolidation --------------------------------------------------------------------------------------------


class ConsolidationStarted(BaseModel):
    status: Literal["started"] = "started"
    job_id: str


class ConsolidationResult(BaseModel):
    """What a run did (`zengram.memory.services.consolidation.RunSummary`); empty until the job finishes."""

    memories_considered: int | None = left_out()
    batches: int | None = left_out()
    clients: list[str] | None = left_out()
    merged: int | None = left_out()
    superseded: int | None = left_out()
    skipped_duplicates: int | None = left_out()
    contradictions: int | None = left_out()
    connections: int | None = left_out()
    summaries: int | None = left_out()
    categorized: int | None = left_out()
    consolidated: int | None = left_out()
    expired: int | None = left_out()


class JobBody(BaseModel):
    job_id: str
    status: JobStatus
    trigger: JobTrigger
    created_at: str
    started_at: str | None = None
    finished_at: str | None = None
    result: ConsolidationResult
    error: str | None = None


class ConsolidationStatusBody(BaseModel):
    is_running: bool
    last_run_at: str | None
    llm: LLMInfo
    enabled: bool
    interval: str
    last_job_id: str | None = None  # the run that finished last (GET /consolidate/job/{id}, admin only)
