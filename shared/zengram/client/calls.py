"""`Call`: one request (method, path, query, body) and how to read its answer; the keyword options of the SDK's
methods; reading answers and building requests. The endpoints themselves are `BrainApi`'s methods (api.py)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, TypedDict, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from zengram.client.errors import ERRORS_BY_STATUS, BrainError, RateLimitError
from zengram.client.retry import retry_after_seconds
from zengram.kernel.timestamps import format_timestamp

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
