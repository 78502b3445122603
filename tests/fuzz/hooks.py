"""Schemathesis CLI hooks for `make fuzz` (loaded through SCHEMATHESIS_HOOKS=tests.fuzz.hooks)."""

from __future__ import annotations

import atexit
import json
from collections import Counter
from typing import Any

import schemathesis

from tests.fuzz.rules import accepted_reason

ACCEPTED: Counter[str] = Counter()


@schemathesis.hook("filter_failure")
def accept_only_the_stated_exceptions(ctx: Any, failure: Any, case: Any, response: Any) -> bool:
    try:
        body = json.loads(response.content)
    except ValueError:
        body = None
    reason = accepted_reason(case.operation.method, case.operation.path, failure.code, response.status_code, body)
    if reason is None:
        return True
    ACCEPTED[reason] += 1
    return False


@atexit.register
def _report_what_was_accepted() -> None:
    print("\nfuzz: failures accepted for a stated reason (tests/fuzz/rules.py):")
    for reason, count in ACCEPTED.most_common():
        print(f"  {count:5d}  {reason}")
    if not ACCEPTED:
        print("  none")
