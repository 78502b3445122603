"""Property-based fuzzing of the API from its own OpenAPI document (schemathesis).

- `tests/api/test_openapi_fuzz.py` runs in `make test`: every operation, positive and negative cases, a few
  dozen examples each, every response check.
- `make fuzz` (`python -m tests.fuzz`) runs the schemathesis CLI against a live embedded server: every phase
  (examples, coverage, fuzzing, stateful), every check, thousands of cases.

Both accept exactly the failures `rules.accepted_reason` explains, each for a stated reason.
"""
