"""Writes the sample API Gateway HTTP API (v2) events in events/ — the same shape `sam local` sends.

Run: .venv/bin/python infra/scripts/make_events.py. Path ids are `SAMPLE-ID`; tests substitute real ids.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

EVENTS = Path(__file__).resolve().parents[2] / "events"
SAMPLE_KEY = "sample-api-key"


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
        event["pathParameters"] = {"memory_id": "SAMPLE-ID"}
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


def main() -> None:
    for relative, event in SAMPLES.items():
        path = EVENTS / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(event, indent=2) + "\n")
        print(f"wrote {path.relative_to(EVENTS.parent)}")


if __name__ == "__main__":
    main()
