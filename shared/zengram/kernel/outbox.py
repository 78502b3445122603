"""The index outbox: records whose last change has not reached the search index yet, the attempts the repair sweep
made at them, and the ones it gave up on ("parked") until an operator retries them."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

MAX_ERROR_CHARS = 500  # a stored index error is cut to this: enough to diagnose, bounded in size


class IndexAttempts(BaseModel):
    """What `record_index_failure` left: the failed attempts counted at this revision, and whether it is parked."""

    model_config = ConfigDict(frozen=True)

    attempts: int
    parked: bool


class ParkedRecord(BaseModel):
    """A record the repair sweep stopped retrying after `attempts` failed attempts at its `revision`."""

    model_config = ConfigDict(frozen=True)

    memory_id: str
    revision: int
    attempts: int
    last_error: str
    parked_at: datetime


def describe_error(error: BaseException) -> str:
    """One line naming the error, bounded in length, as the outbox stores and /stats shows it."""
    text = " ".join(str(error).split()) or "no message"
    return f"{type(error).__name__}: {text}"[:MAX_ERROR_CHARS]
