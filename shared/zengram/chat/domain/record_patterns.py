"""Caller-supplied regexes in record schemas (`pattern`, `patternProperties`) run on RE2, whose matching time is
linear in the input: Python's `re` backtracks, and `"pattern": "^(a+)+$"` against forty `a`s and a `!` would hold
the process for hours. A pattern RE2 cannot compile (a backreference, a lookaround) is refused when the schema is
defined, with the field that holds it named."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

from zengram.kernel.errors import InvalidInput

# Keywords whose values are data, not schemas: a `pattern` key inside them is no regex.
_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})


@functools.lru_cache(maxsize=512)
def compiled(pattern: str) -> Any:
    """The RE2 program of `pattern`; `re2.error` when RE2 cannot run it."""
    import re2  # only the functions that validate records load it

    options = re2.Options()
    options.log_errors = False
    return re2.compile(pattern, options)


def search(pattern: str, text: str) -> bool:
    return compiled(pattern).search(text) is not None


def check_patterns(schema: Any, field: str) -> None:
    """InvalidInput naming `field` when a regex anywhere in `schema` is one RE2 cannot run, or when
    `unevaluatedProperties` would have jsonschema match `patternProperties` with Python's `re`."""
    import re2

    has_pattern_properties = False
    for keyword, pattern in _patterns(schema):
        has_pattern_properties |= keyword == "patternProperties"
        try:
            compiled(pattern)
        except re2.error as error:
            raise InvalidInput(field, f"{keyword} {pattern!r} is not supported (RE2 syntax, linear time): "
                                      f"{_reason(error)}") from None
    if has_pattern_properties and _has_keyword(schema, "unevaluatedProperties"):
        raise InvalidInput(field, "unevaluatedProperties cannot be combined with patternProperties")


def record_validator(schema: Mapping[str, Any]) -> Any:
    """A Draft 2020-12 validator of `schema` whose regex keywords run on RE2."""
    return _validator_class()(schema)


@functools.cache
def _validator_class() -> Any:
    from jsonschema import Draft202012Validator, ValidationError, validators

    def pattern(validator: Any, regex: str, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "string") and not search(regex, instance):
            yield ValidationError(f"{instance!r} does not match {regex!r}")

    def pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for regex, subschema in patterns.items():
            for key, value in instance.items():
                if search(regex, key):
                    yield from validator.descend(value, subschema, path=key, schema_path=regex)

    def additional_properties(validator: Any, allowed: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        properties, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
        extras = [key for key in instance
                  if key not in properties and not any(search(regex, key) for regex in patterns)]
        if validator.is_type(allowed, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], allowed, path=extra)
        elif not allowed and extras:
            listed = ", ".join(repr(extra) for extra in sorted(extras))
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(f"Additional properties are not allowed ({listed} {verb} unexpected)")

    return validators.extend(Draft202012Validator, {  # type: ignore[no-untyped-call]
        "pattern": pattern, "patternProperties": pattern_properties,
        "additionalProperties": additional_properties})


def _patterns(schema: Any) -> Iterator[tuple[str, str]]:
    if isinstance(schema, list):
        for item in schema:
            yield from _patterns(item)
    if not isinstance(schema, dict):
        return
    for keyword, value in schema.items():
        if keyword == "pattern" and isinstance(value, str):
            yield keyword, value
        elif keyword == "patternProperties" and isinstance(value, dict):
            yield from ((keyword, regex) for regex in value)
        if keyword not in _DATA_KEYWORDS:
            yield from _patterns(value)


def _has_keyword(schema: Any, name: str) -> bool:
    if isinstance(schema, list):
        return any(_has_keyword(item, name) for item in schema)
    if isinstance(schema, dict):
        return any(keyword == name or (keyword not in _DATA_KEYWORDS and _has_keyword(value, name))
                   for keyword, value in schema.items())
    return False


def _reason(error: Exception) -> str:
    reason = error.args[0] if error.args else error
    return reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
