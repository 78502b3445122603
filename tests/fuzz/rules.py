"""The few check failures a fuzz run accepts, each for a stated reason; everything else fails the run.

1. A schema-valid request refused (ST202) for a rule OpenAPI cannot state as a schema: it compares two fields or
   ties one query parameter to another's value. The document states each in words, and the server's 400 names
   it; the rejection is accepted only when the message is that rule's.
2. A 502/503 (ST101) from the operations that need an LLM: the fuzzed server runs without one, and those answers
   are the documented ones for that case. A 500 from them still fails.
3. A 413 `body: larger than …` to a body the generator made larger than the server's body limit (a string over
   its maxLength in each of many blocks): the limit refuses it before anything is parsed, whatever the operation,
   so it is neither undocumented (ST103) nor invalid data accepted (ST201).
"""

from __future__ import annotations

from typing import Any

# The rule, as the server's 400 message starts or contains it.
RULES_STATED_IN_WORDS = (
    "key: only type=facts can be queried by key",  # GET /memory/query: `key` with another type
    "subject: only type=statuses can be queried by subject",  # GET /memory/query: `subject` with another type
    "valid_to: must be later than valid_from",  # POST /memory: compares two timestamps
    "date_to: must not be before date_from",  # GET /memory/search: compares two timestamps
    "must fall between years 0001 and 9999 once converted to UTC",  # any timestamp: the offset moves the year
    "metadata: may be at most 10240 bytes as JSON",  # metadata: the serialised size
    "value: may be at most 65536 bytes as JSON",  # agent state and record data: the serialised size
    ": not valid JSON Schema",  # a record field's keywords (a `pattern` that is no regex, `items` that is no schema)
    "type_name: 'schemas' is reserved",  # /records/schemas is a path of its own
    "scope_id: ",  # a prompt's scope_id goes with its scope (none for project, required for subject and chat)
    "required for provider '",  # chat completions: `mnx.provider` (a body field) needs that provider's key header
    "slot: required (or predicate)",  # POST /api/v1/claims: the SDK names the slot one way or the other
    "value: required (or object_value)",  # POST /api/v1/claims: likewise the value
    "valid_until: must be after valid_from",  # a claim's validity window compares two timestamps
    "endpoint_url: required when mode is",  # an integration: pull and both need an endpoint
    "auth_secret: required when auth_type is",  # an integration: auth needs its secret
    "output_map: each key may appear once",  # an integration's output map: keys across its entries
    "endpoint_url: outbound calls are off",  # the operator allows no outbound URL (ZENGRAM_OUTBOUND_ALLOW)
    "endpoint_url: must be an http(s) URL with a host",  # the URL's scheme and host, checked as a URL
    "endpoint_url: not a valid URL",
    "endpoint_url: must not carry user info",
    "schedule_seconds: a schedule is",  # an integration's schedule goes with its mode and scope
)
LLM_OPERATIONS = {("POST", "/consolidate"), ("POST", "/reflect"), ("POST", "/research"),
                  ("POST", "/api/v1/chat/completions"), ("POST", "/api/v1/messages")}
SCHEMA_VALID_REQUEST_REJECTED = "ST202"
SERVER_ERROR = "ST101"
BODY_LIMIT_FAILURES = {"ST103", "ST201"}  # undocumented status; invalid data accepted


def accepted_reason(method: str, path: str, failure_code: str, status: int, body: Any) -> str | None:
    """The stated reason that explains this failure (it is then accepted), or None: the failure stands."""
    message = body.get("error", "") if isinstance(body, dict) else ""
    if status == 413 and failure_code in BODY_LIMIT_FAILURES and message.startswith("body: larger than "):
        return f"{failure_code} 413: the body limit refused an oversized body before parsing it"
    if failure_code == SCHEMA_VALID_REQUEST_REJECTED and status == 400:
        message = body.get("error", "") if isinstance(body, dict) else ""
        return next((f"{failure_code} {rule}" for rule in RULES_STATED_IN_WORDS if rule in message), None)
    if failure_code == SERVER_ERROR and status in (502, 503) and (method.upper(), path) in LLM_OPERATIONS:
        return f"{failure_code} {status} from {method.upper()} {path}, which needs an LLM"
    return None
