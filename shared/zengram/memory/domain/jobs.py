"""Background jobs (a consolidation run) and the named lock that keeps one run at a time."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from zengram.kernel.timestamps import format_timestamp


class JobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"

    @property
    def finished(self) -> bool:
        return self in (JobStatus.SUCCEEDED, JobStatus.FAILED)


class JobTrigger(StrEnum):
    API = "api"  # POST /consolidate
    SCHEDULE = "schedule"  # the schedule's tick


class Job(BaseModel):
    """One run of a background job, as the job store keeps it."""

    model_config = ConfigDict(frozen=True)

    id: str
    kind: str
    status: JobStatus = JobStatus.QUEUED
    trigger: JobTrigger = JobTrigger.API
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    result: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None

    @field_serializer("created_at", "started_at", "finished_at", when_used="json")
    def _timestamp_text(self, moment: datetime | None) -> str | None:
        return format_timestamp(moment) if moment is not None else None


class LockState(BaseModel):
    """Who holds a named lock, and until when (a holder that crashed stops blocking at `expires_at`)."""

    model_config = ConfigDict(frozen=True)

    name: str
    owner: str
    expires_at: datetime

    def held_at(self, moment: datetime) -> bool:
        return self.expires_at > moment
