"""Timestamps as stored and sent: one text form that sorts and parses back, whatever the year."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from zengram.kernel.timestamps import format_timestamp, parse_timestamp


@pytest.mark.parametrize("moment", [
    datetime(2026, 3, 28, 12, 0, 0, 123456, tzinfo=UTC),
    datetime(295, 12, 13, 21, 13, 1, 980000, tzinfo=timezone(timedelta(hours=11))),
    datetime(1, 1, 1, 0, 0, tzinfo=UTC),
])
def test_a_formatted_timestamp_parses_back_to_the_same_millisecond(moment: datetime) -> None:
    text = format_timestamp(moment)

    assert text.endswith("Z") and len(text) == len("2026-03-28T12:00:00.123Z")
    assert parse_timestamp(text) == moment.astimezone(UTC).replace(microsecond=moment.microsecond // 1000 * 1000)


def test_formatted_timestamps_sort_as_text_like_the_moments() -> None:
    moments = [datetime(year, 6, 1, tzinfo=UTC) for year in (999, 1000, 2026)]

    assert sorted(format_timestamp(m) for m in moments) == [format_timestamp(m) for m in moments]
