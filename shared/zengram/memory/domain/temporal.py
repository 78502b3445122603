"""The temporal resolver: time words in a search query ("yesterday", "last week", "in March", "two days ago")
turned into a date window, relative to a reference moment, plus the proximity boost upstream Zengram gives
memories near that moment. Pure: the caller passes the reference (a request's `reference_date`, else now).

A memory's moment is when it happened or became true: `valid_from`, else the time it was stored.
All windows include both ends; days are calendar days of the reference's time zone (UTC from the API).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from enum import StrEnum
from typing import Any

SECONDS_PER_DAY = 86_400.0
RECENT_DAYS = 14  # "recently", and "last week" (the 14 days before the reference, as upstream)
LAST_MONTH_MARGIN_DAYS = 5  # "last month": the previous calendar month, 5 days either side
DAYS_AGO_MARGIN = 2  # "3 days ago": 1 to 5 days ago
WEEKS_AGO_MARGIN = 5  # "2 weeks ago": 9 to 19 days ago


class TemporalMode(StrEnum):
    """Which time words become date windows. OFF: none. CALENDAR: only what names a calendar month or year
    ("in May 2022", "in March", "in 2022"), whatever else the query says. ALL: upstream's resolver, every
    pattern below."""

    OFF = "off"
    CALENDAR = "calendar"
    ALL = "all"


class TemporalPattern(StrEnum):
    """Which kind of time reference the query made (upstream's `temporalPattern` values, plus `named_year`)."""

    YESTERDAY = "yesterday"
    TODAY = "today"
    RELATIVE_AGO = "relative_ago"
    THIS_PERIOD = "this_period"
    LAST_PERIOD = "last_period"
    RECENT = "recent"
    NAMED_MONTH = "named_month"
    NAMED_YEAR = "named_year"
    ORDERING = "ordering"  # "first", "latest": no window, an order the caller may use
    GENERIC = "generic_temporal"  # "when", "date", "before"…: a question about time, no window


@dataclass(frozen=True)
class TemporalResolution:
    """What the resolver found in a query. `date_from`/`date_to` bound a window (either may be open);
    `order` is "asc" (earliest first) or "desc" (latest first) for ordering questions."""

    pattern: TemporalPattern | None = None
    date_from: datetime | None = None
    date_to: datetime | None = None
    order: str | None = None

    @property
    def is_temporal(self) -> bool:
        return self.pattern is not None

    def wire(self) -> dict[str, Any]:
        """Upstream Zengram's `retrieval.temporal` object (its camelCase keys)."""
        body: dict[str, Any] = {
            "dateFrom": _iso(self.date_from), "dateTo": _iso(self.date_to),
            "isTemporalQuery": self.is_temporal, "temporalPattern": self.pattern.value if self.pattern else None,
        }
        if self.order:
            body["orderDirection"] = self.order
        return body


NOT_TEMPORAL = TemporalResolution()

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH_NUMBER = {name: number for number, name in enumerate(_MONTHS, start=1)}
_MONTH_NUMBER.update({name[:3]: number for name, number in list(_MONTH_NUMBER.items())})
_MONTH_NUMBER["sept"] = 9
_COUNT_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a couple": 2, "couple of": 2,
    "a few": 3, "few": 3, "several": 3,
}
_COUNT = r"\d{1,3}|" + "|".join(sorted((re.escape(word) for word in _COUNT_WORDS), key=len, reverse=True))

_YESTERDAY = re.compile(r"\byesterday\b")
_TODAY = re.compile(r"\btoday\b")
_AGO = re.compile(rf"\b({_COUNT})\s+(day|week|month|year)s?\s+ago\b")
_THIS = re.compile(r"\bthis\s+(week|month|year)\b")
_LAST = re.compile(r"\b(?:last|past|previous)\s+(week|month|year)\b")
_RECENT = re.compile(r"\brecent(?:ly)?\b")
_IN_MONTH = re.compile(r"\b(?:in|during)\s+(" + "|".join(sorted(_MONTH_NUMBER, key=len, reverse=True))
                       + r")\b(?:\s*,?\s*((?:19|20)\d\d)\b)?")
_IN_YEAR = re.compile(r"\b(?:in|during)\s+((?:19|20)\d\d)\b")
_EARLIEST = re.compile(r"\b(first|earliest|oldest|initial|originally|began|started)\b")
_LATEST = re.compile(r"\b(latest|most recent|newest|last time|final|current)\b")
_GENERIC = re.compile(r"\b(when|date|time|day|week|month|year|ago|before|after|during|since|until|earlier)\b")


def resolve_temporal(query: str, reference: datetime, mode: TemporalMode = TemporalMode.ALL) -> TemporalResolution:
    """The first time reference `query` makes (in the order below), resolved against `reference`; under
    CALENDAR only month and year names give a window. A window that falls outside the calendar (years 1 to
    9999) is left out: the query then counts as a generic one."""
    text = query.casefold()
    resolvers = _CALENDAR_RESOLVERS if mode is TemporalMode.CALENDAR else _ALL_RESOLVERS
    for resolver in resolvers if mode is not TemporalMode.OFF else ():
        try:
            found = resolver(text, reference)
        except (ValueError, OverflowError):
            return TemporalResolution(TemporalPattern.GENERIC)
        if found is not None:
            return found
    if _EARLIEST.search(text):
        return TemporalResolution(TemporalPattern.ORDERING, order="asc")
    if _LATEST.search(text):
        return TemporalResolution(TemporalPattern.ORDERING, order="desc")
    if _GENERIC.search(text):
        return TemporalResolution(TemporalPattern.GENERIC)
    return NOT_TEMPORAL


def proximity_boost(moment: datetime, reference: datetime, half_life_days: float) -> float:
    """1 + e^(-days apart / half-life): 2.0 at the reference, ~1.37 one half-life away, → 1.0 far off."""
    days = abs((reference - moment).total_seconds()) / SECONDS_PER_DAY
    return 1.0 + math.exp(-days / half_life_days)


def within(moment: datetime, date_from: datetime | None, date_to: datetime | None) -> bool:
    return (date_from is None or moment >= date_from) and (date_to is None or moment <= date_to)


# -- the resolvers, each None when its pattern is absent ----------------------------------------------------

def _yesterday_or_today(text: str, reference: datetime) -> TemporalResolution | None:
    if _YESTERDAY.search(text):
        day = reference - timedelta(days=1)
        return TemporalResolution(TemporalPattern.YESTERDAY, _start_of_day(day), _end_of_day(day))
    if _TODAY.search(text):
        return TemporalResolution(TemporalPattern.TODAY, _start_of_day(reference), _end_of_day(reference))
    return None


def _ago(text: str, reference: datetime) -> TemporalResolution | None:
    match = _AGO.search(text)
    if match is None:
        return None
    count, unit = _count(match.group(1)), match.group(2)
    if unit == "day":
        centre, margin = reference - timedelta(days=count), timedelta(days=DAYS_AGO_MARGIN)
        window = (centre - margin, centre + margin)
    elif unit == "week":
        centre, margin = reference - timedelta(weeks=count), timedelta(days=WEEKS_AGO_MARGIN)
        window = (centre - margin, centre + margin)
    elif unit == "month":
        first = _add_months(_month_start(reference), -count)
        window = (first, _month_end(first))
    else:
        year = reference.year - count
        window = (_year_start(reference, year), _year_end(reference, year))
    return TemporalResolution(TemporalPattern.RELATIVE_AGO, *window)


def _this_period(text: str, reference: datetime) -> TemporalResolution | None:
    match = _THIS.search(text)
    if match is None:
        return None
    unit = match.group(1)
    if unit == "week":
        start = _start_of_day(reference - timedelta(days=reference.weekday()))  # Monday
    elif unit == "month":
        start = _month_start(reference)
    else:
        start = _year_start(reference, reference.year)
    return TemporalResolution(TemporalPattern.THIS_PERIOD, start, _end_of_day(reference))


def _last_period(text: str, reference: datetime) -> TemporalResolution | None:
    match = _LAST.search(text)
    if match is None:
        return None
    unit = match.group(1)
    if unit == "week":
        window = (reference - timedelta(days=RECENT_DAYS), reference)
    elif unit == "month":
        first = _add_months(_month_start(reference), -1)
        margin = timedelta(days=LAST_MONTH_MARGIN_DAYS)
        window = (first - margin, _month_end(first) + margin)
    else:
        window = (_year_start(reference, reference.year - 1), _year_end(reference, reference.year - 1))
    return TemporalResolution(TemporalPattern.LAST_PERIOD, *window)


def _recent(text: str, reference: datetime) -> TemporalResolution | None:
    if not _RECENT.search(text):
        return None
    return TemporalResolution(TemporalPattern.RECENT, reference - timedelta(days=RECENT_DAYS), _end_of_day(reference))


def _named_month(text: str, reference: datetime) -> TemporalResolution | None:
    """"in March": the latest March that began by the reference; "in March 2023": that one."""
    match = _IN_MONTH.search(text)
    if match is None:
        return None
    month = _MONTH_NUMBER[match.group(1)]
    if match.group(2):
        year = int(match.group(2))
    else:
        year = reference.year if month <= reference.month else reference.year - 1
    first = _month_start(reference).replace(year=year, month=month)
    return TemporalResolution(TemporalPattern.NAMED_MONTH, first, _month_end(first))


def _named_year(text: str, reference: datetime) -> TemporalResolution | None:
    match = _IN_YEAR.search(text)
    if match is None:
        return None
    year = int(match.group(1))
    return TemporalResolution(TemporalPattern.NAMED_YEAR, _year_start(reference, year), _year_end(reference, year))


_ALL_RESOLVERS = (_yesterday_or_today, _ago, _this_period, _last_period, _recent, _named_month, _named_year)
_CALENDAR_RESOLVERS = (_named_month, _named_year)


# -- calendar arithmetic ------------------------------------------------------------------------------------

def _count(word: str) -> int:
    return int(word) if word.isdigit() else _COUNT_WORDS[" ".join(word.split())]


def _start_of_day(moment: datetime) -> datetime:
    return datetime.combine(moment.date(), time.min, tzinfo=moment.tzinfo)


def _end_of_day(moment: datetime) -> datetime:
    return datetime.combine(moment.date(), time.max, tzinfo=moment.tzinfo)


def _month_start(moment: datetime) -> datetime:
    return _start_of_day(moment.replace(day=1))


def _add_months(first_of_month: datetime, months: int) -> datetime:
    index = first_of_month.year * 12 + first_of_month.month - 1 + months
    return first_of_month.replace(year=index // 12, month=index % 12 + 1)


def _month_end(first_of_month: datetime) -> datetime:
    return _add_months(first_of_month, 1) - timedelta(microseconds=1)


def _year_start(reference: datetime, year: int) -> datetime:
    return _start_of_day(reference.replace(year=year, month=1, day=1))


def _year_end(reference: datetime, year: int) -> datetime:
    return _end_of_day(reference.replace(year=year, month=12, day=31))


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None
