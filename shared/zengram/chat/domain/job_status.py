"""A learning job's status, apart from the job model: the chat function's routes filter by it without importing
the learning models (#18 §5: a function's init imports only what its routes need)."""

from __future__ import annotations

from enum import StrEnum


class JobStatus(StrEnum):
    PENDING = "pending"  # waiting (first run, or a retry after `not_before`)
    RUNNING = "running"  # claimed by a worker until `lease_until`
    DONE = "done"
    FAILED = "failed"  # every attempt failed: kept with its error until retried by hand
