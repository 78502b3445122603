"""Moments in UTC and their one text form (ISO 8601, milliseconds, `Z`).

A module without models, so what only formats a timestamp (the chat layer's records, the API's bodies) does not
build the memory models when a Lambda function starts. `zengram.memory.domain.models` re-exports these names."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def utc_now() -> datetime:
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """Naive timestamps are taken as UTC; aware ones are converted to UTC.

    Raises ValueError (which request models report as invalid input naming the field) when the UTC moment falls outside
    the years 1 to 9999, as `0001-01-01T00:00:00+14:00` does: Python's own OverflowError would be an internal error.
    """
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise ValueError("must fall between years 0001 and 9999 once converted to UTC") from None


def shifted(moment: datetime, delta: timedelta) -> datetime:
    """`moment + delta`, held at the ends of the calendar instead of overflowing (an imported year-1 memory)."""
    try:
        return moment + delta
    except OverflowError:
        end = datetime.min if delta < timedelta(0) else datetime.max
        return end.replace(tzinfo=moment.tzinfo)


def format_timestamp(moment: datetime) -> str:
    """ISO 8601 in UTC with millisecond precision and a `Z`: sorts as text, reads like Zengram's."""
    utc = as_utc(moment)
    # The year by hand: strftime's %Y does not zero-pad years before 1000 on every platform.
    return f"{utc.year:04d}-" + utc.strftime("%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_timestamp(text: str) -> datetime:
    """Inverse of `format_timestamp`; accepts any ISO 8601 form Python understands."""
    return as_utc(datetime.fromisoformat(text.replace("Z", "+00:00")))
