"""Every endpoint as a `Call`: method, path, query, body and how to read the answer. The sync and async
clients only send calls, so both speak exactly the same API."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, TypedDict, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from zengram.client.bodies import (
    BriefingBody,
    EntityMemoriesBody,
    ExportBody,
    JobBody,
    QueryBody,
    SearchBody,
    StoreBody,
)
from zengram.client.errors import ERRORS_BY_STATUS, BrainError, RateLimitError
from zengram.client.retry import retry_after_seconds
from zengram.documents.domain.query import DocumentQuery, QueryResponse
from zengram.kernel.timestamps import format_timestamp
from zengram.memory.api.schemas.clients import ClientBody, ClientDeletedBody, ClientListBody
from zengram.memory.api.schemas.consolidation import ConsolidationStarted, ConsolidationStatusBody
from zengram.memory.api.schemas.entities import EntityDetailBody, EntityListBody, EntityStatsBody, ReclassifyBody
from zengram.memory.api.schemas.export import ImportBody
from zengram.memory.api.schemas.health import HealthBody
from zengram.memory.api.schemas.keys import ApiKeyListBody, CreatedKeyBody, RevokedKeyBody
from zengram.memory.api.schemas.memory import DeleteBody, RestoreBody, UpdateBody
from zengram.memory.api.schemas.research import ResearchBody
from zengram.memory.api.schemas.stats import StatsBody
from zengram.memory.domain.models import Memory
from zengram.memory.domain.reflect import ReflectResult

T = TypeVar("T")
ModelT = TypeVar("ModelT", bound=BaseModel)
JsonObject = dict[str, Any]
Timestamp = str | datetime


@dataclass(frozen=True)
class Call(Generic[T]):
    method: str
    path: str
    read: Callable[[Any], T]
    params: Mapping[str, str] = field(default_factory=dict)
    body: Any = None
    slow: bool = False  # LLM-backed: gets the long timeout


# -- options (keyword arguments; names and meanings as in the HTTP API; None means "leave out") -----------


class StoreOptions(TypedDict, total=False):
    client_id: str | None
    category: str | None
    importance: str | None
    knowledge_category: str | None
    key: str | None
    subject: str | None
    status_value: str | None
    metadata: JsonObject | None
    valid_from: Timestamp | None
    valid_to: Timestamp | None


class SearchOptions(TypedDict, total=False):
    type: str | None
    source_agent: str | None
    client_id: str | None
    category: str | None
    knowledge_category: str | None
    entity: str | None
    limit: int | None
    format: str | None  # compact | index | full; none: the whole record, text under `text`
    include_superseded: bool | None
    at_time: Timestamp | None
    read_only: bool | None
    track_access: bool | None
    reference_date: Timestamp | None
    date_from: Timestamp | None
    date_to: Timestamp | None


class QueryOptions(TypedDict, total=False):
    source_agent: str | None
    category: str | None
    client_id: str | None
    since: Timestamp | None
    key: str | None
    subject: str | None
    include_superseded: bool | None
    limit: int | None
    offset: int | None


class UpdateOptions(TypedDict, total=False):
    content: str | None
    importance: str | None
    knowledge_category: str | None
    metadata: JsonObject | None


class BriefingOptions(TypedDict, total=False):
    agent: str | None
    include: str | None
    client_id: str | None
    format: str | None
    limit: int | None


class ExportOptions(TypedDict, total=False):
    client_id: str | None
    type: str | None
    since: Timestamp | None
    active_only: bool | None
    order: str | None  # newest (the server's default) | oldest
    limit: int | None
    offset: int | None


class ClientOptions(TypedDict, total=False):
    name: str | None
    aliases: list[str] | None
    people: list[str] | None
    domains: list[str] | None
    keywords: list[str] | None


EntityAction = Literal["list", "get", "memories", "stats"]


# -- reading answers --------------------------------------------------------------------------------------


def model(cls: type[ModelT]) -> Callable[[Any], ModelT]:
    return cls.model_validate


def json_object(payload: Any) -> JsonObject:
    if not isinstance(payload, dict):
        raise BrainError(f"expected a JSON object from the server, got {type(payload).__name__}")
    return payload


def error_text(response: httpx.Response) -> str:
    """The server's `error` field (with its `message`, where an error code comes with words, as upstream's
    `research_disabled` does); the raw body (or the reason phrase) when it sent something else."""
    try:
        payload = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return response.text.strip() or response.reason_phrase
    if isinstance(payload, dict) and isinstance(payload.get("error"), str):
        message = payload.get("message")
        return f"{payload['error']}: {message}" if isinstance(message, str) else str(payload["error"])
    return response.text.strip()


def raise_for_error(response: httpx.Response) -> None:
    if response.status_code < 400:
        return
    details: dict[str, Any] = {"request_id": response.headers.get("x-request-id"), "response_body": response.text}
    if response.status_code == 429:
        raise RateLimitError(error_text(response), retry_after=retry_after_seconds(response), **details)
    error_class = ERRORS_BY_STATUS.get(response.status_code, BrainError)
    raise error_class(error_text(response), status_code=response.status_code, **details)


def read_response(call: Call[T], response: httpx.Response) -> T:
    raise_for_error(response)
    if not response.content:  # e.g. 204 No Content
        return call.read({})
    try:
        payload = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise BrainError(f"the server answered {call.method} {call.path} with something that is not JSON",
                         status_code=response.status_code, request_id=response.headers.get("x-request-id"),
                         response_body=response.text) from error
    return call.read(payload)


# -- building requests ------------------------------------------------------------------------------------


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return format_timestamp(value)
    return str(value)


def query_params(options: Mapping[str, object]) -> dict[str, str]:
    return {name: _text(value) for name, value in options.items() if value is not None}


def json_body(options: Mapping[str, object]) -> JsonObject:
    return {name: format_timestamp(value) if isinstance(value, datetime) else value
            for name, value in options.items() if value is not None}


def segment(value: str) -> str:
    """One path segment, escaped (entity names like `Next.js` or `C/C++` stay one segment)."""
    if not value:
        raise ValueError("path segment must not be empty")
    return quote(value, safe="")


# -- memory -----------------------------------------------------------------------------------------------


def health() -> Call[HealthBody]:
    return Call("GET", "/health", model(HealthBody))


def store(type: str, content: str, source_agent: str, options: StoreOptions) -> Call[StoreBody]:
    body = json_body({"type": type, "content": content, "source_agent": source_agent, **options})
    return Call("POST", "/memory", model(StoreBody), body=body)


def search(query: str, options: SearchOptions) -> Call[SearchBody]:
    return Call("GET", "/memory/search", model(SearchBody), params=query_params({"q": query, **options}))


def query(type: str, options: QueryOptions) -> Call[QueryBody]:
    return Call("GET", "/memory/query", model(QueryBody), params=query_params({"type": type, **options}))


def get(memory_id: str) -> Call[Memory]:
    return Call("GET", f"/memory/{segment(memory_id)}", model(Memory))


def update(memory_id: str, fields: UpdateOptions) -> Call[UpdateBody]:
    body = json_body(dict(fields))
    if not body:
        raise ValueError("Must provide at least one field to update (content, importance, knowledge_category, "
                         "metadata)")
    return Call("PATCH", f"/memory/{segment(memory_id)}", model(UpdateBody), body=body)


def delete(memory_id: str, reason: str | None, source_agent: str | None) -> Call[DeleteBody]:
    body = json_body({"reason": reason, "source_agent": source_agent})
    return Call("DELETE", f"/memory/{segment(memory_id)}", model(DeleteBody), body=body)


def restore(memory_id: str) -> Call[RestoreBody]:
    return Call("POST", f"/memory/{segment(memory_id)}/restore", model(RestoreBody))


# -- knowledge views --------------------------------------------------------------------------------------


def briefing(since: Timestamp, options: BriefingOptions) -> Call[BriefingBody]:
    return Call("GET", "/briefing", model(BriefingBody), params=query_params({"since": since, **options}))


def stats() -> Call[StatsBody]:
    return Call("GET", "/stats", model(StatsBody))


def export(options: ExportOptions) -> Call[ExportBody]:
    return Call("GET", "/export", model(ExportBody), params=query_params(dict(options)))


def import_(data: Sequence[Mapping[str, Any]], operator_approved: bool) -> Call[ImportBody]:
    body = {"data": [dict(record) for record in data], "operator_approved": operator_approved}
    return Call("POST", "/export/import", model(ImportBody), body=body)


# -- entities ---------------------------------------------------------------------------------------------


def entities(action: EntityAction, name: str | None, type: str | None, limit: int | None,
             offset: int | None, client_id: str | None = None) -> Call[JsonObject]:
    """Zengram's `brain_entities` dispatch (list, get, memories or stats), answered as plain JSON."""
    if action == "stats":
        return Call("GET", "/entities/stats", json_object)
    if action in ("get", "memories"):
        if not name:
            raise ValueError(f"name is required for action={action!r}")
        if action == "get":
            return Call("GET", entity(name).path, json_object)
        memories = entity_memories(name, limit, client_id)
        return Call("GET", memories.path, json_object, params=memories.params)
    if action != "list":
        raise ValueError(f"action must be one of list, get, memories, stats (got {action!r})")
    return Call("GET", "/entities", json_object, params=query_params({"type": type, "limit": limit,
                                                                       "offset": offset}))


def list_entities(type: str | None, limit: int | None, offset: int | None) -> Call[EntityListBody]:
    return Call("GET", "/entities", model(EntityListBody),
                params=query_params({"type": type, "limit": limit, "offset": offset}))


def entity(name: str) -> Call[EntityDetailBody]:
    return Call("GET", f"/entities/{segment(name)}", model(EntityDetailBody))


def entity_memories(name: str, limit: int | None, client_id: str | None = None) -> Call[EntityMemoriesBody]:
    return Call("GET", f"/entities/{segment(name)}/memories", model(EntityMemoriesBody),
                params=query_params({"limit": limit, "client_id": client_id}))


def entity_stats() -> Call[EntityStatsBody]:
    return Call("GET", "/entities/stats", model(EntityStatsBody))


def reclassify(reclassifications: Sequence[Mapping[str, str]], dry_run: bool) -> Call[ReclassifyBody]:
    body = {"reclassifications": [dict(item) for item in reclassifications], "dry_run": dry_run}
    return Call("POST", "/entities/reclassify", model(ReclassifyBody), body=body)


# -- LLM features -----------------------------------------------------------------------------------------


def consolidate(sync: bool) -> Call[ConsolidationStarted | JobBody]:
    """202 with a job id; with `sync` the finished job."""
    read = model(JobBody) if sync else model(ConsolidationStarted)
    return Call("POST", "/consolidate", read, params=query_params({"sync": True} if sync else {}), slow=sync)


def consolidation_status() -> Call[ConsolidationStatusBody]:
    return Call("GET", "/consolidate/status", model(ConsolidationStatusBody))


def consolidation_job(job_id: str) -> Call[JobBody]:
    return Call("GET", f"/consolidate/job/{segment(job_id)}", model(JobBody))


def reflect(topic: str, client_id: str | None, limit: int | None) -> Call[ReflectResult]:
    body = json_body({"topic": topic, "client_id": client_id, "limit": limit})
    return Call("POST", "/reflect", model(ReflectResult), body=body, slow=True)


def research(topic: str, client_id: str | None, max_iterations: int | None) -> Call[ResearchBody]:
    body = json_body({"topic": topic, "client_id": client_id, "max_iterations": max_iterations})
    return Call("POST", "/research", model(ResearchBody), body=body, slow=True)


def docs_query(query: DocumentQuery) -> Call[QueryResponse]:
    """POST /kb/query: the document knowledge base, mounted beside the memory API."""
    return Call("POST", "/kb/query", model(QueryResponse), body=query.model_dump(mode="json", exclude_none=True))


# -- client fingerprints ----------------------------------------------------------------------------------


def put_client(client_id: str, options: ClientOptions) -> Call[ClientBody]:
    return Call("PUT", f"/clients/{segment(client_id)}", model(ClientBody), body=json_body(dict(options)))


def get_client(client_id: str) -> Call[ClientBody]:
    return Call("GET", f"/clients/{segment(client_id)}", model(ClientBody))


def list_clients() -> Call[ClientListBody]:
    return Call("GET", "/clients", model(ClientListBody))


def delete_client(client_id: str) -> Call[ClientDeletedBody]:
    return Call("DELETE", f"/clients/{segment(client_id)}", model(ClientDeletedBody))


def create_key(name: str, role: str, clients: Sequence[str] | str | None) -> Call[CreatedKeyBody]:
    body = json_body({"name": name, "role": role, "clients": list(clients) if isinstance(clients, list | tuple)
                      else clients})
    return Call("POST", "/admin/keys", model(CreatedKeyBody), body=body)


def list_keys() -> Call[ApiKeyListBody]:
    return Call("GET", "/admin/keys", model(ApiKeyListBody))


def revoke_key(key_id: str) -> Call[RevokedKeyBody]:
    return Call("DELETE", f"/admin/keys/{segment(key_id)}", model(RevokedKeyBody))
