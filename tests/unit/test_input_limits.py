"""The checks that keep hostile input a 400: nesting measured without recursion (in JSON text and in parsed
values), non-finite numbers found by path, timestamps that overflow in UTC, time arithmetic held at the calendar's
ends, and the one definition of blank text that the validators and the OpenAPI pattern share."""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from zengram.kernel.json_limits import json_depth, non_finite_number_at, within_limits
from zengram.kernel.text_rules import SOME_TEXT_PATTERN, not_blank
from zengram.memory.domain.models import as_utc, shifted
from zengram.web.json_guard import MAX_JSON_DEPTH, nesting_problem


def deeply_nested(depth: int) -> dict[str, Any]:
    """`{"a": {"a": ... 1}}` built without recursion, as a hostile parser's output would be."""
    outermost: dict[str, Any] = {}
    current = outermost
    for _ in range(depth - 1):
        current["a"] = {}
        current = current["a"]
    current["a"] = 1
    return outermost


# -- nesting in parsed values --------------------------------------------------------------------------------


def test_json_depth_measures_far_beyond_the_recursion_limit() -> None:
    depth = sys.getrecursionlimit() * 20

    assert json_depth(deeply_nested(depth)) == depth


@pytest.mark.parametrize(("value", "depth"), [
    ("x", 0), ([], 1), ({"a": 1}, 1), ({"a": {"b": [1]}}, 3), ({"a": [], "b": {"c": {"d": {}}}}, 4),
    ([1, [2, [3]], {"k": "v"}], 3),
])
def test_json_depth_counts_objects_and_arrays(value: Any, depth: int) -> None:
    assert json_depth(value) == depth


@pytest.mark.parametrize(("value", "path"), [
    ({"a": 1.5, "b": [1, 2]}, None),
    ({"a": float("nan")}, "a"),
    ({"a": {"b": [1, float("inf")]}}, "a.b.1"),
    ({"first": -float("inf"), "second": float("nan")}, "first"),
    (float("nan"), ""),
])
def test_non_finite_numbers_are_found_by_path(value: Any, path: str | None) -> None:
    assert non_finite_number_at(value) == path


@pytest.mark.parametrize(("value", "message"), [
    ({"a": {"b": {"c": 1}}}, "notes: may nest at most 2 levels"),
    ({"a": [1, float("nan")]}, "notes.a.1: must be a finite number"),
    (float("inf"), "notes: must be a finite number"),
    ({"a": "x" * 40}, "notes: may be at most 32 bytes as JSON"),
])
def test_a_value_beyond_its_limits_is_refused_naming_the_field(value: Any, message: str) -> None:
    check = within_limits("notes", max_depth=2, max_bytes=32)

    with pytest.raises(ValueError, match=re.escape(message)):
        check(value)


def test_a_value_within_its_limits_passes_unchanged() -> None:
    value = {"a": [1, 2.5, "ok"]}

    assert within_limits("notes", max_depth=2, max_bytes=32)(value) is value


# -- nesting in JSON text --------------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 320, 5_000, 1_000_000])
def test_json_text_nested_too_deep_is_named_by_where_it_goes_deep(depth: int) -> None:
    body = '{"data":[{"metadata":' + '{"a":' * depth + "1" + "}" * depth + "}]}"

    assert nesting_problem(body.encode()) == f"data.0.metadata: JSON may nest at most {MAX_JSON_DEPTH} levels"


def test_json_text_at_the_limit_passes() -> None:
    depth = MAX_JSON_DEPTH
    assert nesting_problem(("[" * depth + "]" * depth).encode()) is None
    assert nesting_problem(("[" * (depth + 1) + "]" * (depth + 1)).encode()) == \
        f"0.0.0: JSON may nest at most {MAX_JSON_DEPTH} levels"


def test_brackets_and_escaped_quotes_inside_strings_are_not_nesting() -> None:
    text = '{"note": "' + '[{\\"' * 10_000 + '", "list": [1, "]]]]", {"k": "}}}"}]}'

    assert nesting_problem(text.encode()) is None


def test_the_path_counts_array_positions_and_takes_keys_with_escapes() -> None:
    body = '{"data": [{}, {"m\\u00e9ta": ' + "[" * 40 + "]" * 40 + "}]}"

    assert nesting_problem(body.encode()) == f"data.1.méta: JSON may nest at most {MAX_JSON_DEPTH} levels"


def test_text_that_is_not_json_is_left_to_the_parser() -> None:
    assert nesting_problem(b"") is None
    assert nesting_problem(b"plain words, no brackets") is None
    assert nesting_problem(b'{"unterminated": "string') is None


# -- timestamps --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("moment", [
    datetime(1, 1, 1, 0, 0, tzinfo=timezone(timedelta(hours=14))),
    datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone(timedelta(hours=-14))),
])
def test_a_moment_outside_the_calendar_in_utc_is_a_value_error(moment: datetime) -> None:
    with pytest.raises(ValueError, match="between years 0001 and 9999"):
        as_utc(moment)


def test_moments_at_the_calendar_ends_convert() -> None:
    assert as_utc(datetime(1, 1, 1, 14, 0, tzinfo=timezone(timedelta(hours=14)))) == datetime(1, 1, 1, tzinfo=UTC)
    assert as_utc(datetime(9999, 12, 31, 23, 59)) == datetime(9999, 12, 31, 23, 59, tzinfo=UTC)


def test_shifted_is_addition_held_at_the_calendar_ends() -> None:
    first, last = datetime.min.replace(tzinfo=UTC), datetime.max.replace(tzinfo=UTC)
    hour = timedelta(hours=1)

    assert shifted(datetime(2026, 3, 28, tzinfo=UTC), -hour) == datetime(2026, 3, 27, 23, tzinfo=UTC)
    assert shifted(first, -hour) == first
    assert shifted(last, hour) == last


# -- blank text ----------------------------------------------------------------------------------------------------


def test_the_openapi_pattern_and_the_validator_agree_on_every_character() -> None:
    disagreements = []
    for code_point in range(sys.maxunicode + 1):
        character = chr(code_point)
        pattern_says_text = re.search(SOME_TEXT_PATTERN, character) is not None
        try:
            validator_says_text = bool(not_blank(character))
        except ValueError:
            validator_says_text = False
        if pattern_says_text != validator_says_text:
            disagreements.append(hex(code_point))

    assert disagreements == []
