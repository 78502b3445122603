"""The role each chat route needs (`zengram.web.access` checks them): a read needs `read`; everything that writes,
completions included (they log and learn), needs `write`. The tenant matrix test keeps this table equal to the
routes the OpenAPI document lists."""

from __future__ import annotations

from zengram.chat.api import PREFIX
from zengram.kernel.keys import Role

READ, WRITE = Role.READ, Role.WRITE
CHAT_ROUTE_ROLES: dict[tuple[str, str], Role] = {(method, f"{PREFIX}{path}"): role for method, path, role in [
    ("POST", "/chat/completions", WRITE),
    ("POST", "/messages", WRITE),
    ("GET", "/memories", READ),
    ("POST", "/memories", WRITE),
    ("GET", "/memories/search", READ),
    ("GET", "/memories/superseded", READ),
    ("GET", "/memories/recalls", READ),
    ("GET", "/memories/{memory_id}", READ),
    ("PATCH", "/memories/{memory_id}", WRITE),
    ("DELETE", "/memories/{memory_id}", WRITE),
    ("POST", "/memories/{memory_id}/restore", WRITE),
    ("GET", "/chat/history/list", READ),
    ("GET", "/chat/history/read", READ),
    ("DELETE", "/chat/history/delete", WRITE),
    ("GET", "/chat/trace", READ),
    ("GET", "/chat/learning", READ),
    ("POST", "/chat/learning/{job_id}/retry", WRITE),
    ("GET", "/state/{key}", READ),
    ("PUT", "/state/{key}", WRITE),
    ("DELETE", "/state/{key}", WRITE),
    ("POST", "/records/schemas", WRITE),
    ("GET", "/records/schemas", READ),
    ("GET", "/records/schemas/{type_name}", READ),
    ("POST", "/records/{type_name}", WRITE),
    ("POST", "/records/{type_name}/query", READ),
    ("POST", "/records/{type_name}/search", READ),
    ("GET", "/records/{type_name}/{record_id}", READ),
    ("PUT", "/records/{type_name}/{record_id}", WRITE),
    ("DELETE", "/records/{type_name}/{record_id}", WRITE),
    ("GET", "/prompts", READ),
    ("POST", "/prompts", WRITE),
    ("GET", "/prompts/resolve", READ),
    ("GET", "/prompts/{prompt_id}", READ),
    ("PATCH", "/prompts/{prompt_id}", WRITE),
    ("DELETE", "/prompts/{prompt_id}", WRITE),
    ("POST", "/claims", WRITE),
    ("GET", "/claims/{claim_id}", READ),
    ("POST", "/claims/{claim_id}/retract", WRITE),
    ("GET", "/claims/subject/{subject_id}/truth", READ),
    ("GET", "/claims/subject/{subject_id}/slot/{slot}", READ),
    ("GET", "/claims/subject/{subject_id}/slots", READ),
    ("GET", "/claims/subject/{subject_id}/history", READ),
    ("GET", "/claims/subject/{subject_id}/graph", READ),
    ("GET", "/memories/{memory_id}/claims", READ),
    ("GET", "/profiles", READ),
    ("PATCH", "/profiles", WRITE),
    ("DELETE", "/profiles", WRITE),
    ("GET", "/profiles/schema", READ),
    ("GET", "/memory/policies", READ),
    ("POST", "/memory/policies", WRITE),
    ("GET", "/memory/policies/resolve", READ),
    ("GET", "/memory/policies/{policy_id}", READ),
    ("PATCH", "/memory/policies/{policy_id}", WRITE),
    ("DELETE", "/memory/policies/{policy_id}", WRITE),
    ("GET", "/events/memories", READ),
    ("GET", "/audit/requests", READ),
]}

# What the Mnexium SDK can call and this layer does not offer: a 501 for any key (chat/api/unsupported.py).
UNSUPPORTED_PATHS = ("/integrations", "/integrations/{rest:path}")
UNSUPPORTED_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
UNSUPPORTED_ROLES: dict[tuple[str, str], Role] = {
    (method, f"{PREFIX}{path}"): READ for path in UNSUPPORTED_PATHS for method in UNSUPPORTED_METHODS}
