"""Writes the sample events in events/: API Gateway HTTP API (v2) requests in the shape `sam local` sends, and the
scheduled, Step Functions and CloudFormation events the other functions receive. events/README.md says more.

Run: .venv/bin/python infra/scripts/make_events.py (it also removes any file under events/ it does not write, but
events/README.md). Path ids are `SAMPLE-ID`; tests substitute real ids. tests/infra/test_events.py checks that the
committed files are exactly what this script writes, byte for byte.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

EVENTS = Path(__file__).resolve().parents[2] / "events"
SAMPLE_KEY = "sample-api-key"
HAND_WRITTEN = {"README.md"}  # events/ files this script leaves alone


def http_event(method: str, path: str, *, query: dict[str, str] | None = None, body: Any = None,
               route: str | None = None, authenticated: bool = True, request_id: str) -> dict[str, Any]:
    headers = {"accept": "application/json", "host": "abc123.execute-api.eu-west-1.amazonaws.com",
               "user-agent": "curl/8.5.0", "x-request-id": request_id}
    if authenticated:
        headers["x-api-key"] = SAMPLE_KEY
    if body is not None:
        headers["content-type"] = "application/json"
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": f"{method} {route or path}",
        "rawPath": path,
        "rawQueryString": urlencode(query or {}),
        "headers": headers,
        "requestContext": {
            "accountId": "123456789012", "apiId": "abc123",
            "domainName": "abc123.execute-api.eu-west-1.amazonaws.com", "domainPrefix": "abc123",
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "203.0.113.10",
                     "userAgent": "curl/8.5.0"},
            "requestId": f"{request_id}-apigw", "routeKey": f"{method} {route or path}", "stage": "$default",
            "time": "01/Dec/2026:06:00:00 +0000", "timeEpoch": 1796104800000,
        },
        "isBase64Encoded": False,
    }
    if query:
        event["queryStringParameters"] = query
    if route and "{" in route:
        name = route[route.index("{") + 1:route.index("}")]
        event["pathParameters"] = {name: path.split("/")[route[:route.index("{")].count("/")]}
    if body is not None:
        event["body"] = json.dumps(body)
    return event


SAMPLES: dict[str, dict[str, Any]] = {
    "health/get_health.json": http_event("GET", "/health", authenticated=False, request_id="sample-health-1"),
    "memory/post_memory.json": http_event("POST", "/memory", request_id="sample-store-1", body={
        "type": "fact", "content": "Acme Corp uses Next.js 14 with App Router", "source_agent": "claude-code",
        "client_id": "acme-corp", "key": "acme-tech-stack", "importance": "high",
        "knowledge_category": "technical"}),
    "memory/get_search.json": http_event("GET", "/memory/search", request_id="sample-search-1", query={
        "q": "which frontend framework does Acme use", "client_id": "acme-corp", "format": "compact",
        "limit": "5"}),
    "memory/get_query.json": http_event("GET", "/memory/query", request_id="sample-query-1",
                                        query={"type": "facts", "key": "acme-tech-stack"}),
    "memory/get_memory.json": http_event("GET", "/memory/SAMPLE-ID", route="/memory/{memory_id}",
                                         request_id="sample-get-1"),
    "memory/get_history.json": http_event("GET", "/memory/SAMPLE-ID/history", route="/memory/{memory_id}/history",
                                          request_id="sample-history-1"),
    "memory/patch_memory.json": http_event("PATCH", "/memory/SAMPLE-ID", route="/memory/{memory_id}",
                                           request_id="sample-patch-1",
                                           body={"content": "Acme Corp uses Next.js 15", "importance": "critical"}),
    "memory/delete_memory.json": http_event("DELETE", "/memory/SAMPLE-ID", route="/memory/{memory_id}",
                                            request_id="sample-delete-1", body={"reason": "Incorrect information"}),
    "memory/post_restore.json": http_event("POST", "/memory/SAMPLE-ID/restore", route="/memory/{memory_id}/restore",
                                           request_id="sample-restore-1"),
    "memory/post_memory_invalid.json": http_event("POST", "/memory", request_id="sample-store-bad", body={
        "type": "opinion", "content": "", "source_agent": "claude code"}),
    "memory/get_search_unauthenticated.json": http_event("GET", "/memory/search", authenticated=False,
                                                         request_id="sample-search-401", query={"q": "x"}),
    "briefing/get_briefing.json": http_event("GET", "/briefing", request_id="sample-briefing-1", query={
        "since": "2026-03-28T00:00:00Z", "agent": "claude-code", "format": "compact"}),
    "briefing/get_briefing_summary_all.json": http_event("GET", "/briefing", request_id="sample-briefing-2", query={
        "since": "2026-03-28T00:00:00Z", "agent": "claude-code", "include": "all", "format": "summary",
        "client_id": "acme-corp", "limit": "50"}),
    "briefing/get_briefing_invalid.json": http_event("GET", "/briefing", request_id="sample-briefing-bad",
                                                     query={"since": "yesterday", "limit": "501"}),
    "export/get_export.json": http_event("GET", "/export", request_id="sample-export-1", query={
        "client_id": "acme-corp", "active_only": "false", "limit": "1000", "offset": "0"}),
    "export/post_import.json": http_event("POST", "/export/import", request_id="sample-import-1", body={
        "operator_approved": True, "data": [
            {"id": "0b7c6a52-3f7e-4c1e-9a4f-1d2e3f405162", "type": "fact",
             "content": "Acme Corp deploys from GitHub Actions to Vercel", "source_agent": "claude-code",
             "client_id": "acme-corp", "key": "acme-deploy-target", "importance": "high",
             "created_at": "2026-03-28T09:00:00.000Z", "updated_at": "2026-03-28T09:00:00.000Z"},
            {"type": "event", "content": "Acme signed the renewal", "source_agent": "n8n",
             "client_id": "acme-corp"},
            {"type": "opinion", "content": "not a memory type", "source_agent": "n8n"},
        ]}),
    "export/post_import_unapproved.json": http_event("POST", "/export/import", request_id="sample-import-403", body={
        "data": [{"type": "event", "content": "Acme signed the renewal", "source_agent": "n8n"}]}),
    "repair/scheduled_repair.json": {
        "version": "0", "id": "7bf73129-1428-4cd3-a780-95db273d1602", "detail-type": "Scheduled Event",
        "source": "aws.events", "account": "123456789012", "time": "2026-12-01T06:15:00Z", "region": "eu-west-1",
        "resources": ["arn:aws:events:eu-west-1:123456789012:rule/zengram-RepairSchedule"], "detail": {},
    },
}


# POST /research, and the events the research state machine's Task states send its step function
# (`{"step", "state"}`: the Lambda payload of infra/statemachines/research.asl.json).
_RESEARCH_TOPIC = "which decision superseded the caching approach, and what status did it leave the API in?"
_RESEARCH_START = {"topic": _RESEARCH_TOPIC, "client_id": "acme-corp", "max_iterations": 3, "query": _RESEARCH_TOPIC,
                   "iterations": 0, "memory_ids": [], "query_trace": [], "judgement": None, "repeated_query": False,
                   "result": None}
_RESEARCH_RETRIEVED = {**_RESEARCH_START, "iterations": 1, "memory_ids": ["SAMPLE-ID"],
                       "query_trace": [{"query": _RESEARCH_TOPIC, "retrieved": 1, "cumulative": 1}]}
_RESEARCH_JUDGED = {**_RESEARCH_RETRIEVED, "query": "API status after the cache change", "judgement": {
    "draft": "The Redis cache was replaced [mem:SAMPLE-ID]", "status": "INSUFFICIENT",
    "reason": "nothing says what status the API was left in", "missing": ["API status after the cache change"]}}
SAMPLES.update({
    "research/post_research.json": http_event("POST", "/research", request_id="sample-research-1", body={
        "topic": _RESEARCH_TOPIC, "client_id": "acme-corp", "max_iterations": 3}),
    "research/post_research_invalid.json": http_event("POST", "/research", request_id="sample-research-bad",
                                                      body={"topic": "caching", "max_iterations": 9}),
    "research_step/retrieve.json": {"step": "retrieve", "state": _RESEARCH_START},
    "research_step/judge.json": {"step": "judge", "state": _RESEARCH_RETRIEVED},
    "research_step/synthesize.json": {"step": "synthesize", "state": _RESEARCH_JUDGED},
})

SAMPLES.update({
    "reflect/post_reflect.json": http_event("POST", "/reflect", request_id="sample-reflect-1", body={
        "topic": "deployment pipeline", "client_id": "acme-corp", "limit": 20}),
    "reflect/post_reflect_invalid.json": http_event("POST", "/reflect", request_id="sample-reflect-bad",
                                                    body={"topic": "deployment pipeline", "limit": 51}),
})

SAMPLES.update({
    "clients/put_client.json": http_event("PUT", "/clients/acme-corp", route="/clients/{client_id}",
                                          request_id="sample-client-put-1", body={
        "name": "Acme Corporation", "aliases": ["Acme", "Acme Corp"], "people": ["Jane Doe"],
        "domains": ["acme.com"], "keywords": ["anvils", "rockets"]}),
    "clients/put_client_invalid.json": http_event("PUT", "/clients/acme-corp", route="/clients/{client_id}",
                                                  request_id="sample-client-put-bad", body={"aliases": "Acme"}),
    "clients/get_client.json": http_event("GET", "/clients/acme-corp", route="/clients/{client_id}",
                                          request_id="sample-client-get-1"),
    "clients/list_clients.json": http_event("GET", "/clients", request_id="sample-client-list-1"),
    "clients/delete_client.json": http_event("DELETE", "/clients/acme-corp", route="/clients/{client_id}",
                                             request_id="sample-client-delete-1"),
})

SAMPLES.update({
    "briefing/get_stats.json": http_event("GET", "/stats", request_id="sample-stats-1"),
})

SAMPLES.update({
    "entities/list_entities.json": http_event("GET", "/entities", request_id="sample-entities-1",
                                              query={"type": "technology", "limit": "50", "offset": "0"}),
    "entities/get_entity_stats.json": http_event("GET", "/entities/stats", request_id="sample-entities-stats-1"),
    "entities/get_entity_graph.json": http_event("GET", "/entities/graph", request_id="sample-entities-graph-1",
                                                 query={"type": "technology", "limit": "60", "min_strength": "2"}),
    "entities/get_entity.json": http_event("GET", "/entities/nextjs", route="/entities/{name}",
                                           request_id="sample-entity-1"),
    "entities/get_entity_memories.json": http_event("GET", "/entities/Next.js/memories",
                                                    route="/entities/{name}/memories",
                                                    request_id="sample-entity-memories-1", query={"limit": "20"}),
    "entities/post_reclassify_dry_run.json": http_event("POST", "/entities/reclassify",
                                                        request_id="sample-reclassify-1", body={
        "reclassifications": [{"name": "PostgreSQL", "new_type": "system"}], "dry_run": True}),
    "entities/post_reclassify.json": http_event("POST", "/entities/reclassify", request_id="sample-reclassify-2",
                                                body={"reclassifications": [{"name": "PostgreSQL",
                                                                             "new_type": "system"}],
                                                      "dry_run": False}),
    "entities/post_reclassify_invalid.json": http_event("POST", "/entities/reclassify",
                                                        request_id="sample-reclassify-bad", body={
        "reclassifications": [{"name": "PostgreSQL", "new_type": "database"}]}),
})



# Consolidation: the HTTP routes, the job event an async POST sends the function itself, and the schedule.
SAMPLES.update({
    "consolidate/post_consolidate.json": http_event("POST", "/consolidate", request_id="sample-consolidate-1"),
    "consolidate/post_consolidate_sync.json": http_event("POST", "/consolidate", request_id="sample-consolidate-2",
                                                         query={"sync": "true"}),
    "consolidate/get_job.json": http_event("GET", "/consolidate/job/SAMPLE-ID", route="/consolidate/job/{job_id}",
                                           request_id="sample-consolidate-job-1"),
    "consolidate/get_status.json": http_event("GET", "/consolidate/status", request_id="sample-consolidate-status"),
    "consolidate/run_job.json": {"zengram_job_id": "SAMPLE-ID"},
    "consolidate/scheduled_consolidation.json": {
        "version": "0", "id": "5f9d2c1e-8b7a-4e3f-9c6d-2a1b0c9d8e7f", "detail-type": "Scheduled Event",
        "source": "aws.scheduler", "account": "123456789012", "time": "2026-12-01T06:00:00Z", "region": "eu-west-1",
        "resources": ["arn:aws:scheduler:eu-west-1:123456789012:schedule/default/zengram-ConsolidationSchedule"],
        "detail": {},
    },
})
# The document knowledge base: one greedy route (ANY /kb/{proxy+}); the Agent Brain CLI's trailing slashes and its
# bearer token; folders are s3://<documents bucket>/<prefix> (tests substitute the bucket for SAMPLE-BUCKET).
KB_ROUTE = "/kb/{proxy+}"


def kb_event(method: str, path: str, *, bearer: bool = False, **options: Any) -> dict[str, Any]:
    event = http_event(method, path, route=KB_ROUTE, **options)
    event["pathParameters"] = {"proxy": path.removeprefix("/kb/")}
    if bearer:
        event["headers"].pop("x-api-key", None)
        event["headers"]["authorization"] = f"Bearer {SAMPLE_KEY}"
    return event


SAMPLES.update({
    "documents/get_health.json": kb_event("GET", "/kb/health/", authenticated=False, request_id="sample-kb-health"),
    "documents/get_status.json": kb_event("GET", "/kb/health/status", bearer=True, request_id="sample-kb-status"),
    "documents/post_index.json": kb_event("POST", "/kb/index/", bearer=True, request_id="sample-kb-index", body={
        "folder_path": "s3://SAMPLE-BUCKET/handbook", "recursive": True, "include_code": True, "chunk_size": 512,
        "chunk_overlap": 50}),
    "documents/post_index_forbidden.json": kb_event("POST", "/kb/index", request_id="sample-kb-index-403",
                                                    body={"folder_path": "s3://another-bucket/secrets"}),
    "documents/get_job.json": kb_event("GET", "/kb/index/jobs/SAMPLE-ID", bearer=True, request_id="sample-kb-job"),
    "documents/post_query.json": kb_event("POST", "/kb/query/", bearer=True, request_id="sample-kb-query", body={
        "query": "what calls compute_total", "mode": "graph", "top_k": 5, "traversal_depth": 2,
        "include_relationships": True}),
    "documents/post_query_hybrid.json": kb_event("POST", "/kb/query", request_id="sample-kb-query-2", body={
        "query": "how is the invoice total computed", "mode": "hybrid", "alpha": 0.5, "similarity_threshold": 0.2}),
    "documents/delete_index.json": kb_event("DELETE", "/kb/index/", bearer=True, request_id="sample-kb-reset"),
    "documents/get_docs.json": kb_event("GET", "/kb/openapi.json", authenticated=False, request_id="sample-kb-docs"),
    "documents_step/plan.json": {"step": "plan", "job_id": "SAMPLE-ID"},
    "documents_step/batch.json": {"step": "batch", "job_id": "SAMPLE-ID"},
    "documents_step/finish.json": {"step": "finish", "job_id": "SAMPLE-ID"},
    "documents_step/fail.json": {"step": "fail", "job_id": "SAMPLE-ID", "error": "States.TaskFailed",
                                 "cause": "the batch Lambda ran out of memory"},
})


# Scoped API keys (admin only): create, list, revoke.
SAMPLES.update({
    "admin/post_key.json": http_event("POST", "/admin/keys", request_id="sample-key-create-1", body={
        "name": "acme-support-agent", "role": "write", "clients": ["acme-corp"]}),
    "admin/post_key_invalid.json": http_event("POST", "/admin/keys", request_id="sample-key-create-bad", body={
        "name": "acme-support-agent", "role": "owner", "clients": ["acme-corp"]}),
    "admin/list_keys.json": http_event("GET", "/admin/keys", request_id="sample-key-list-1"),
    "admin/delete_key.json": http_event("DELETE", "/admin/keys/SAMPLE-ID", route="/admin/keys/{key_id}",
                                        request_id="sample-key-revoke-1"),
})



def authorizer_event(method: str, path: str, *, headers: dict[str, str], identity: list[str] | None,
                     request_id: str) -> dict[str, Any]:
    """What the HTTP API sends its Lambda REQUEST authorizer (payload 2.0): the request, the route, and the values
    of the authorizer's identity source (the header its answer is cached under)."""
    request = http_event(method, path, authenticated=False, request_id=request_id)
    request["headers"].update(headers)
    event = {"version": "2.0", "type": "REQUEST",
             "routeArn": f"arn:aws:execute-api:eu-west-1:123456789012:abc123/$default/{method}{path}", **request}
    if identity is not None:
        event["identitySource"] = identity
    return event


def authorized(event: dict[str, Any], claims: dict[str, str]) -> dict[str, Any]:
    """A request as a function receives it behind the authorizer: the key verified, its claims in the context."""
    event["headers"].pop("x-api-key", None)
    event["requestContext"]["authorizer"] = {"lambda": claims}
    return event


# The authorizer: the key in each header a client family sends (the identity source of its authorizer).
SAMPLES.update({
    "authorizer/api_key.json": authorizer_event("GET", "/memory/search", headers={"x-api-key": SAMPLE_KEY},
                                                identity=[SAMPLE_KEY], request_id="sample-authorizer-1"),
    "authorizer/bearer_token.json": authorizer_event("POST", "/kb/query",
                                                     headers={"authorization": f"Bearer {SAMPLE_KEY}"},
                                                     identity=[f"Bearer {SAMPLE_KEY}"],
                                                     request_id="sample-authorizer-2"),
    "authorizer/mnexium_key.json": authorizer_event("POST", "/chat", headers={"x-mnexium-key": SAMPLE_KEY},
                                                    identity=[SAMPLE_KEY], request_id="sample-authorizer-3"),
    "authorizer/invalid_key.json": authorizer_event("GET", "/stats", headers={"x-api-key": "not-a-key"},
                                                    identity=["not-a-key"], request_id="sample-authorizer-4"),
})

# Requests that passed the authorizer: no key header, the caller in the context (a read key of acme-corp).
READ_KEY_CLAIMS = {"key_id": "0123456789abcdef0123456789abcdef", "name": "acme-reader", "role": "read",
                   "clients": '["acme-corp"]'}
SAMPLES.update({
    "memory/get_search_authorized.json": authorized(
        http_event("GET", "/memory/search", request_id="sample-search-authorized",
                   query={"q": "which frontend framework does Acme use", "client_id": "acme-corp"}),
        READ_KEY_CLAIMS),
    "memory/post_memory_authorized.json": authorized(
        http_event("POST", "/memory", request_id="sample-store-authorized", body={
            "type": "fact", "content": "Acme Corp deploys on Fridays", "source_agent": "claude-code",
            "client_id": "acme-corp"}),
        READ_KEY_CLAIMS),
})


# The chat context layer (/api/v1, docs/chat.md): the Mnexium SDK sends its key as x-mnexium-key.
def mnx_event(method: str, path: str, *, headers: dict[str, str] | None = None, **options: Any) -> dict[str, Any]:
    event = http_event(method, f"/api/v1{path}", route=f"/api/v1{options.pop('route')}" if "route" in options else None,
                       **options)
    event["headers"]["x-mnexium-key"] = event["headers"].pop("x-api-key", SAMPLE_KEY)
    event["headers"].update(headers or {})
    return event


CHAT_TURN = {"model": "gpt-4o-mini",
             "messages": [{"role": "user", "content": "Which Italian dish should I cook tonight?"}],
             "mnx": {"subject_id": "user_123", "chat_id": "chat_sample", "history": True, "recall": True,
                     "learn": False}}
ANTHROPIC_TURN = {"model": "claude-sonnet-4-5", "max_tokens": 512, "system": "Answer in one sentence.",
                  "messages": [{"role": "user", "content": [
                      {"type": "text", "text": "Which Italian dish should I cook tonight?"}]}],
                  "mnx": {"subject_id": "user_123", "chat_id": "chat_anthropic", "recall": True, "learn": False}}


def anthropic_event(**options: Any) -> dict[str, Any]:
    """A POST /api/v1/messages as the anthropic SDK sends it (x-api-key, anthropic-version)."""
    event = http_event("POST", "/api/v1/messages", **options)
    event["headers"]["anthropic-version"] = "2023-06-01"
    return event


SAMPLES.update({
    "chat/post_completion.json": mnx_event("POST", "/chat/completions", request_id="sample-chat-1", body=CHAT_TURN),
    "chat/post_completion_stream.json": mnx_event("POST", "/chat/completions", request_id="sample-chat-2",
                                                  body={**CHAT_TURN, "stream": True}),
    # Anthropic's Messages wire: the anthropic SDK sends our key as x-api-key, the caller's own as x-anthropic-key.
    "chat/post_message.json": anthropic_event(request_id="sample-chat-3", body=ANTHROPIC_TURN),
    "chat/post_message_stream.json": anthropic_event(request_id="sample-chat-4",
                                                     body={**ANTHROPIC_TURN, "stream": True}),
    "chat_data/post_memory.json": mnx_event("POST", "/memories", request_id="sample-chat-memory-1", body={
        "subject_id": "user_123", "text": "User is vegetarian and enjoys Italian cuisine", "kind": "preference"}),
    "chat_data/post_memory_invalid.json": mnx_event("POST", "/memories", request_id="sample-chat-memory-bad", body={
        "subject_id": "user_123", "text": "   ", "importance": 101}),
    "chat_data/get_memories.json": mnx_event("GET", "/memories", request_id="sample-chat-memories-1",
                                        query={"subject_id": "user_123", "limit": "20"}),
    "chat_data/get_memory_search.json": mnx_event("GET", "/memories/search", request_id="sample-chat-search-1",
                                             query={"subject_id": "user_123", "q": "food preferences"}),
    "chat/put_state.json": mnx_event("PUT", "/state/current_task", route="/state/{key}",
                                     request_id="sample-chat-state-1", headers={"x-subject-id": "user_123"},
                                     body={"value": {"step": 3, "next": "book hotels"}, "ttl_seconds": 3600}),
    "chat/get_state.json": mnx_event("GET", "/state/current_task", route="/state/{key}",
                                     request_id="sample-chat-state-2", headers={"x-subject-id": "user_123"}),
    "chat_data/post_record_schema.json": mnx_event("POST", "/records/schemas", request_id="sample-chat-schema-1", body={
        "type_name": "account", "fields": {"name": {"type": "string", "required": True}, "arr": {"type": "number"}}}),
    "chat/post_prompt.json": mnx_event("POST", "/prompts", request_id="sample-chat-prompt-1", body={
        "name": "Support", "prompt_text": "You are a helpful support agent.", "is_default": True}),
    "chat/get_history_list.json": mnx_event("GET", "/chat/history/list", request_id="sample-chat-history-1",
                                            query={"subject_id": "user_123"}),
    "chat/get_trace.json": mnx_event("GET", "/chat/trace", request_id="sample-chat-trace-1",
                                     query={"chat_id": "chat_sample"}),
    "chat_data/post_claim.json": mnx_event("POST", "/claims", request_id="sample-chat-claims-1", body={
        "subject_id": "user_123", "slot": "diet", "value": "vegetarian", "confidence": 0.9, "source": "chat"}),
    "chat_data/get_claims_truth.json": mnx_event("GET", "/claims/subject/user_123/truth",
                                                 route="/claims/subject/{subject_id}/truth",
                                                 request_id="sample-chat-claims-2"),
    "chat_data/patch_profile.json": mnx_event("PATCH", "/profiles", request_id="sample-chat-profiles-1", body={
        "subject_id": "user_123", "updates": [{"field_key": "timezone", "value": "Europe/Lisbon"}]}),
    "chat_data/get_integrations_unsupported.json": mnx_event("GET", "/integrations", route="/{proxy+}",
                                                             request_id="sample-chat-integrations-1"),
    "chat_data/get_memory_events.json": mnx_event("GET", "/events/memories", request_id="sample-chat-events-1",
                                                  query={"subject_id": "user_123"},
                                                  headers={"accept": "text/event-stream", "last-event-id": "0"}),
    "chat_data/get_audit_requests.json": mnx_event("GET", "/audit/requests", request_id="sample-chat-audit-1",
                                                   query={"subject_id": "user_123", "limit": "20"},
                                                   headers={"x-session-id": "sample-session"}),
    "chat_learning/run_job.json": {"zengram_job_id": "SAMPLE-ID"},
    "chat_learning/scheduled_sweep.json": {
        "version": "0", "id": "0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f", "detail-type": "Scheduled Event",
        "source": "aws.scheduler", "account": "123456789012", "time": "2026-12-01T06:05:00Z", "region": "eu-west-1",
        "resources": ["arn:aws:scheduler:eu-west-1:123456789012:schedule/default/zengram-LearningSweep"],
        "detail": {},
    },
})


# The index bootstrap custom resource (infra: Custom::ZengramSearchIndex): CloudFormation's Create, Update, Delete.
_STACK = "arn:aws:cloudformation:eu-west-1:123456789012:stack/zengram-dev/1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
_BOOTSTRAP_TOKEN = "arn:aws:lambda:eu-west-1:123456789012:function:zengram-dev-IndexBootstrapFunction-AbC123:live"
_INDEX_PROPERTIES = {"ServiceToken": _BOOTSTRAP_TOKEN, "Alias": "zengram-dev-memories", "Embedder": "bedrock",
                     "BedrockModelId": "amazon.titan-embed-text-v2:0", "Dimensions": "1024", "DataAccessPolicy": "none"}


def custom_resource_event(request_type: str, **more: Any) -> dict[str, Any]:
    return {
        "RequestType": request_type, "ServiceToken": _BOOTSTRAP_TOKEN,
        "ResponseURL": "https://cloudformation-custom-resource-response-euwest1.s3.eu-west-1.amazonaws.com/"
                       "arn%3Aaws%3Acloudformation%3Aeu-west-1%3A123456789012%3Astack/zengram-dev/"
                       "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d%7CSearchIndex%7Cd2a8e1f0?X-Amz-Signature=sample",
        "StackId": _STACK, "RequestId": "d2a8e1f0-7b6c-4d5e-9f8a-1b2c3d4e5f60", "LogicalResourceId": "SearchIndex",
        "ResourceType": "Custom::ZengramSearchIndex", "ResourceProperties": dict(_INDEX_PROPERTIES), **more,
    }


SAMPLES.update({
    "bootstrap/create.json": custom_resource_event("Create"),
    "bootstrap/update.json": custom_resource_event("Update", PhysicalResourceId="zengram-dev-memories",
                                                   OldResourceProperties={**_INDEX_PROPERTIES, "Dimensions": "512"}),
    "bootstrap/delete.json": custom_resource_event("Delete", PhysicalResourceId="zengram-dev-memories"),
})


def render() -> dict[str, str]:
    """Each sample's path under events/ and the exact text written there."""
    return {relative: json.dumps(event, indent=2) + "\n" for relative, event in sorted(SAMPLES.items())}


def write(target: Path = EVENTS) -> list[str]:
    """Write the samples under `target` and remove every other file there but the hand-written README.md;
    returns the paths written, relative to `target`."""
    texts = render()
    if target.exists():
        for path in sorted(target.rglob("*"), reverse=True):
            relative = path.relative_to(target).as_posix()
            if path.is_file() and relative not in texts and relative not in HAND_WRITTEN:
                path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
    for relative, text in texts.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(texts)


def main(argv: list[str]) -> None:
    """`make_events.py [DIRECTORY]`: into events/, or into DIRECTORY (to compare with the committed files)."""
    target = Path(argv[0]) if argv else EVENTS
    for relative in write(target):
        print(f"wrote {target / relative}")


if __name__ == "__main__":
    main(sys.argv[1:])
