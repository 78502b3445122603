"""The temporal resolver (zengram.memory.domain.temporal), against a fixed reference moment."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from zengram.memory.domain.temporal import TemporalMode, TemporalPattern, proximity_boost, resolve_temporal, within

REFERENCE = datetime(2026, 3, 18, 15, 30, tzinfo=UTC)  # a Wednesday


def day(year: int, month: int, date: int, *clock: int) -> datetime:
    return datetime(year, month, date, *clock, tzinfo=UTC)


END_OF = timedelta(days=1, microseconds=-1)  # a day's start + END_OF = its last instant


@pytest.mark.parametrize(("query", "pattern", "date_from", "date_to"), [
    ("What did we ship yesterday?", "yesterday", day(2026, 3, 17), day(2026, 3, 17) + END_OF),
    ("today's standup", "today", day(2026, 3, 18), day(2026, 3, 18) + END_OF),
    ("the outage 3 days ago", "relative_ago", day(2026, 3, 13, 15, 30), day(2026, 3, 17, 15, 30)),
    ("what broke two days ago", "relative_ago", day(2026, 3, 14, 15, 30), day(2026, 3, 18, 15, 30)),
    ("a couple of weeks ago", "relative_ago", day(2026, 2, 27, 15, 30), day(2026, 3, 9, 15, 30)),
    ("2 months ago", "relative_ago", day(2026, 1, 1), day(2026, 2, 1) - timedelta(microseconds=1)),
    ("a year ago", "relative_ago", day(2025, 1, 1), day(2025, 12, 31) + END_OF),
    ("this week", "this_period", day(2026, 3, 16), day(2026, 3, 18) + END_OF),
    ("this month", "this_period", day(2026, 3, 1), day(2026, 3, 18) + END_OF),
    ("this year", "this_period", day(2026, 1, 1), day(2026, 3, 18) + END_OF),
    ("decisions from last week", "last_period", REFERENCE - timedelta(days=14), REFERENCE),
    ("last month's invoices", "last_period", day(2026, 1, 27), day(2026, 3, 5) + END_OF),
    ("the past year", "last_period", day(2025, 1, 1), day(2025, 12, 31) + END_OF),
    ("what changed recently", "recent", REFERENCE - timedelta(days=14), day(2026, 3, 18) + END_OF),
    ("the launch in March", "named_month", day(2026, 3, 1), day(2026, 4, 1) - timedelta(microseconds=1)),
    ("the offsite in May", "named_month", day(2025, 5, 1), day(2025, 6, 1) - timedelta(microseconds=1)),
    ("hiring during Sept", "named_month", day(2025, 9, 1), day(2025, 10, 1) - timedelta(microseconds=1)),
    ("the audit in December 2024", "named_month", day(2024, 12, 1), day(2025, 1, 1) - timedelta(microseconds=1)),
    ("what did Tim do in October, 2023", "named_month", day(2023, 10, 1), day(2023, 11, 1) - timedelta(microseconds=1)),
    ("the migration in 2022", "named_year", day(2022, 1, 1), day(2022, 12, 31) + END_OF),
])
def test_time_words_resolve_to_a_window_around_the_reference(
    query: str, pattern: str, date_from: datetime, date_to: datetime
) -> None:
    found = resolve_temporal(query, REFERENCE)
    assert found.pattern == TemporalPattern(pattern)
    assert (found.date_from, found.date_to) == (date_from, date_to)
    assert found.is_temporal


def test_month_arithmetic_crosses_the_year_in_january() -> None:
    january = day(2026, 1, 10, 9)
    assert resolve_temporal("last month", january).date_from == day(2025, 11, 26)  # December, 5 days' margin
    assert resolve_temporal("last month", january).date_to == day(2026, 1, 5) + END_OF
    assert resolve_temporal("1 month ago", january).date_from == day(2025, 12, 1)
    assert resolve_temporal("in December", january).date_from == day(2025, 12, 1)
    assert resolve_temporal("in January", january).date_from == day(2026, 1, 1)
    assert resolve_temporal("yesterday", day(2026, 3, 1, 0, 5)).date_from == day(2026, 2, 28)


def test_the_first_pattern_wins_in_upstreams_order() -> None:
    assert resolve_temporal("yesterday and last week", REFERENCE).pattern is TemporalPattern.YESTERDAY
    assert resolve_temporal("the most recent deploy", REFERENCE).pattern is TemporalPattern.RECENT
    assert resolve_temporal("recently, in March", REFERENCE).pattern is TemporalPattern.RECENT


@pytest.mark.parametrize(("query", "order"), [
    ("What was the first database we used?", "asc"), ("when we originally picked Postgres", "asc"),
    ("the latest status of the deploy", "desc"), ("our current plan", "desc"),
])
def test_ordering_words_give_an_order_and_no_window(query: str, order: str) -> None:
    found = resolve_temporal(query, REFERENCE)
    assert (found.pattern, found.order, found.date_from, found.date_to) == (TemporalPattern.ORDERING, order,
                                                                            None, None)


@pytest.mark.parametrize("query", ["When did Acme sign?", "what happened before the launch", "the date of it"])
def test_questions_about_time_are_temporal_without_a_window(query: str) -> None:
    found = resolve_temporal(query, REFERENCE)
    assert (found.pattern, found.date_from, found.date_to) == (TemporalPattern.GENERIC, None, None)


@pytest.mark.parametrize("query", ["Which database does billing use?", "may I ask about the mayor", "in 12 days",
                                   "maybe in Marchand's office", "todays"])
def test_queries_without_time_words_are_not_temporal(query: str) -> None:
    found = resolve_temporal(query, REFERENCE)
    assert not found.is_temporal
    assert found.wire() == {"dateFrom": None, "dateTo": None, "isTemporalQuery": False, "temporalPattern": None}


def test_a_window_outside_the_calendar_is_dropped_not_raised() -> None:
    assert resolve_temporal("999 years ago", day(5, 6, 1)).pattern is TemporalPattern.GENERIC
    assert resolve_temporal("recently", datetime(1, 1, 2, tzinfo=UTC)).date_from is None


def test_wire_form_is_upstreams_camel_case_object() -> None:
    assert resolve_temporal("the first deploy yesterday", REFERENCE).wire() == {
        "dateFrom": "2026-03-17T00:00:00+00:00", "dateTo": "2026-03-17T23:59:59.999999+00:00",
        "isTemporalQuery": True, "temporalPattern": "yesterday"}
    assert resolve_temporal("the first deploy", REFERENCE).wire()["orderDirection"] == "asc"


def test_proximity_boost_halves_its_bonus_per_half_life() -> None:
    assert proximity_boost(REFERENCE, REFERENCE, 30.0) == pytest.approx(2.0)
    assert proximity_boost(REFERENCE - timedelta(days=30), REFERENCE, 30.0) == pytest.approx(1.3679, abs=1e-4)
    assert proximity_boost(REFERENCE + timedelta(days=30), REFERENCE, 30.0) == pytest.approx(1.3679, abs=1e-4)
    assert proximity_boost(REFERENCE - timedelta(days=3000), REFERENCE, 30.0) == pytest.approx(1.0)
    assert proximity_boost(REFERENCE - timedelta(days=10), REFERENCE, 10.0) == pytest.approx(1.3679, abs=1e-4)


def test_within_includes_both_bounds_and_open_ends() -> None:
    assert within(REFERENCE, REFERENCE, REFERENCE)
    assert not within(REFERENCE, REFERENCE + timedelta(microseconds=1), None)
    assert within(REFERENCE, None, None)
    assert not within(REFERENCE, None, REFERENCE - timedelta(seconds=1))


@pytest.mark.parametrize(("query", "pattern", "date_from"), [
    ("What cake did Joanna make recently in May 2022?", "named_month", day(2022, 5, 1)),
    ("the offsite in May", "named_month", day(2025, 5, 1)),
    ("the migration in 2022", "named_year", day(2022, 1, 1)),
    ("what changed last week", "generic_temporal", None),  # relative words give no window
    ("the latest deploy", "ordering", None),
])
def test_calendar_mode_gives_windows_for_month_and_year_names_only(
    query: str, pattern: str, date_from: datetime | None
) -> None:
    found = resolve_temporal(query, REFERENCE, TemporalMode.CALENDAR)
    assert (found.pattern, found.date_from) == (TemporalPattern(pattern), date_from)
    assert not resolve_temporal("what shipped yesterday", REFERENCE, TemporalMode.CALENDAR).is_temporal
    assert resolve_temporal("what shipped yesterday", REFERENCE, TemporalMode.OFF).date_from is None
