"""Integrations: an outside HTTP endpoint configured per project (docs/chat.md, "Integrations"), as the Mnexium SDK
creates them (`mode` pull / webhook / both, `scope` project / subject / chat, templates, an output map, auth).

A *pull* integration is a source: `test` calls its `endpoint_url` and reads values out of the JSON answer through
its `output_map`; `sync` does the same and keeps the values (as a record, see `services/integrations.py`). A
*webhook* integration receives signed pushes at `/integrations/{id}/webhook` and is a sink for signed deliveries
(`domain/webhooks.py`). Secrets (`auth_secret`, `webhook_secret`, sensitive header and auth values) are stored and
used, never answered: `public()` masks them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, WithJsonSchema, field_serializer

from zengram.kernel.errors import InvalidInput
from zengram.kernel.request_fields import NotBoolean
from zengram.kernel.timestamps import format_timestamp

Mode = Literal["pull", "webhook", "both"]
Scope = Literal["project", "subject", "chat"]
Method = Literal["GET", "POST", "PUT", "PATCH"]
AuthType = Literal["none", "bearer", "api_key_header", "basic"]
INTEGRATION_ID_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,99}$"
IntegrationId = Annotated[str, StringConstraints(pattern=INTEGRATION_ID_PATTERN)]
KEY_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
MASK = "********"
_SENSITIVE = re.compile(r"auth|token|secret|key|password|passwd|cookie|session|signature|credential", re.I)
_TEMPLATE = re.compile(r"\{\{\s*(subject_id|chat_id|project_id|integration_id)\s*\}\}")
_Name = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"\S")]
_Text = Annotated[str, StringConstraints(max_length=2000)]
_Secret = Annotated[str, StringConstraints(min_length=1, max_length=4000)]
_Url = Annotated[str, StringConstraints(min_length=1, max_length=2000)]
_HEADER_NAME = r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$"
_Headers = Annotated[dict[Annotated[str, StringConstraints(pattern=_HEADER_NAME)],
                          Annotated[str, StringConstraints(max_length=4000)]], Field(max_length=50),
                     WithJsonSchema({"type": "object", "maxProperties": 50, "propertyNames": {"pattern": _HEADER_NAME},
                                     "additionalProperties": {"type": "string", "maxLength": 4000}})]
_Template = Annotated[dict[str, Any], Field(max_length=100)]


class OutputMapEntry(BaseModel):
    """Where one value is in the endpoint's JSON answer: `path` is `$.a.b[0].c` (or `a.b.0.c`)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    key: Annotated[str, StringConstraints(pattern=KEY_PATTERN)]
    path: Annotated[str, StringConstraints(min_length=1, max_length=500)]
    default: Any = None


OutputMap = Annotated[list[OutputMapEntry], Field(max_length=100)]


class _Settable(BaseModel):
    """The fields create and update share (all optional here; create requires some)."""

    model_config = ConfigDict(extra="ignore")

    description: _Text | None = None
    scope: Scope | None = None
    endpoint_url: _Url | None = None
    method: Method | None = None
    timeout_ms: Annotated[int, Field(ge=100, le=30_000), NotBoolean] | None = None
    cache_ttl_seconds: Annotated[int, Field(ge=0, le=31_536_000), NotBoolean] | None = None
    allow_live_fetch: bool | None = None
    headers_template: _Headers | None = None
    query_template: _Template | None = None
    body_template: _Template | None = None
    auth_config: _Template | None = None
    auth_type: AuthType | None = None
    auth_secret: _Secret | None = None
    webhook_secret: _Secret | None = None
    is_active: bool | None = None
    schedule_seconds: Annotated[int, Field(ge=0, le=604_800), NotBoolean] | None = None  # ours: 0 is none


class IntegrationCreate(_Settable):
    name: _Name
    mode: Mode
    output_map: OutputMap = Field(default_factory=list)
    integration_id: IntegrationId | None = None


class IntegrationUpdate(_Settable):
    name: _Name | None = None
    mode: Mode | None = None
    output_map: OutputMap | None = None

    def changes(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.model_fields_set if getattr(self, name) is not None}


class Integration(BaseModel):
    """A stored integration (secrets included: `public()` is what leaves the server)."""

    model_config = ConfigDict(frozen=True)

    integration_id: str
    project_id: str
    name: str
    description: str = ""
    is_active: bool = True
    mode: Mode
    scope: Scope = "project"
    endpoint_url: str | None = None
    method: Method = "GET"
    timeout_ms: int = 5000
    cache_ttl_seconds: int = 0
    allow_live_fetch: bool = False
    headers_template: dict[str, str] = Field(default_factory=dict)
    query_template: dict[str, Any] = Field(default_factory=dict)
    body_template: dict[str, Any] = Field(default_factory=dict)
    output_map: list[OutputMapEntry] = Field(default_factory=list)
    auth_config: dict[str, Any] = Field(default_factory=dict)
    auth_type: AuthType = "none"
    auth_secret: str | None = None
    webhook_secret: str | None = None
    schedule_seconds: int = 0  # a scheduled sync every so often (0: none)
    created_at: datetime
    updated_at: datetime
    last_synced_at: datetime | None = None
    last_sync_error: str | None = None

    @field_serializer("created_at", "updated_at", "last_synced_at")
    def _stamp(self, value: datetime | None) -> str | None:
        return format_timestamp(value) if value is not None else None

    @classmethod
    def new(cls, integration_id: str, project_id: str, body: IntegrationCreate, at: datetime) -> Integration:
        fields = {name: value for name, value in body.model_dump(exclude={"integration_id"}).items()
                  if value is not None}
        return cls.model_validate({**fields, "integration_id": integration_id, "project_id": project_id,
                                   "created_at": at, "updated_at": at}).checked()

    def updated(self, body: IntegrationUpdate, at: datetime) -> Integration:
        changes = body.changes()
        for name in ("headers_template", "auth_config"):  # a value sent back masked keeps the stored one
            if name in changes:
                stored = getattr(self, name)
                changes[name] = {key: stored.get(key, value) if value == MASK else value
                                 for key, value in changes[name].items()}
        if "output_map" in changes:
            changes["output_map"] = [entry.model_dump() for entry in body.output_map or []]
        return type(self).model_validate({**self.model_dump(), **changes, "updated_at": at}).checked()

    def synced(self, at: datetime, error: str | None = None) -> Integration:
        return self.model_copy(update={"last_synced_at": at, "last_sync_error": error})

    @property
    def next_sync_at(self) -> datetime | None:
        """When the scheduled sync is due: at once when it never ran, then `schedule_seconds` after the last."""
        if not self.schedule_seconds or not self.is_active or self.mode == "webhook":
            return None
        if self.last_synced_at is None:
            return self.created_at
        return self.last_synced_at + timedelta(seconds=self.schedule_seconds)

    def checked(self) -> Integration:
        """The rules across fields: a pull integration has an endpoint, auth has a secret."""
        if self.mode in ("pull", "both") and not self.endpoint_url:
            raise InvalidInput("endpoint_url", f"required when mode is '{self.mode}'")
        if self.auth_type != "none" and not self.auth_secret:
            raise InvalidInput("auth_secret", f"required when auth_type is '{self.auth_type}'")
        if self.schedule_seconds and (self.schedule_seconds < 60 or self.mode == "webhook"
                                      or self.scope != "project"):
            raise InvalidInput("schedule_seconds", "a schedule is 60 s or more (0: none), for a project-scoped "
                                                   "integration with an endpoint (mode 'pull' or 'both')")
        keys = [entry.key for entry in self.output_map]
        if len(set(keys)) != len(keys):
            raise InvalidInput("output_map", "each key may appear once")
        return self

    def public(self) -> dict[str, Any]:
        """What the API answers: every field but the secrets, sensitive header and auth values masked."""
        body = self.model_dump(mode="json", exclude={"auth_secret", "webhook_secret", "last_synced_at"})
        body["next_sync_at"] = body_stamp(self.next_sync_at)
        body["headers_template"] = masked(self.headers_template)
        body["auth_config"] = masked(self.auth_config)
        body.update(has_auth_secret=self.auth_secret is not None, has_webhook_secret=self.webhook_secret is not None,
                    last_synced_at=body_stamp(self.last_synced_at))
        return body


def body_stamp(moment: datetime | None) -> str | None:
    return format_timestamp(moment) if moment is not None else None


def masked(values: Mapping[str, Any]) -> dict[str, Any]:
    """`values` with every value under a sensitive name (authorization, x-api-key, token…) replaced by a mask."""
    return {name: MASK if _SENSITIVE.search(name) and value not in (None, "") else value
            for name, value in values.items()}


@dataclass(frozen=True)
class Target:
    """Whom a call is for (`{{subject_id}}`, `{{chat_id}}` in the templates; where sync keeps the values)."""

    subject_id: str | None = None
    chat_id: str | None = None

    def key(self, integration: Integration) -> str:
        if integration.scope == "subject":
            return f"subject:{self.subject_id}"
        if integration.scope == "chat":
            return f"chat:{self.chat_id}"
        return "project"

    def checked(self, integration: Integration) -> Target:
        if integration.scope == "subject" and not self.subject_id:
            raise InvalidInput("subject_id", "required: the integration's scope is 'subject'")
        if integration.scope == "chat" and not self.chat_id:
            raise InvalidInput("chat_id", "required: the integration's scope is 'chat'")
        return self



# -- the call an integration makes ---------------------------------------------------------------------------------

def render(template: Any, variables: Mapping[str, str]) -> Any:
    """`template` with `{{subject_id}}`, `{{chat_id}}`, `{{project_id}}`, `{{integration_id}}` filled in (an unknown
    variable is left as written; a missing one becomes empty)."""
    if isinstance(template, str):
        return _TEMPLATE.sub(lambda match: variables.get(match[1], ""), template)
    if isinstance(template, Mapping):
        return {key: render(value, variables) for key, value in template.items()}
    if isinstance(template, list):
        return [render(value, variables) for value in template]
    return template


def auth_headers(integration: Integration) -> dict[str, str]:
    """The headers `auth_type` adds, with the stored secret."""
    secret = integration.auth_secret or ""
    if integration.auth_type == "bearer":
        return {"Authorization": f"Bearer {secret}"}
    if integration.auth_type == "api_key_header":
        return {str(integration.auth_config.get("header_name") or "x-api-key"): secret}
    if integration.auth_type == "basic":
        import base64

        user = str(integration.auth_config.get("username") or "")
        return {"Authorization": "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()}
    return {}


# -- reading values out of an answer ------------------------------------------------------------------------------

_STEP = re.compile(r"\[(-?\d+)\]|\[['\"]([^'\"]+)['\"]\]|\.?([^.\[\]]+)")
_MISSING = object()


def _steps(path: str) -> list[str | int]:
    text = path.strip()
    text = text[1:] if text.startswith("$") else text
    steps: list[str | int] = []
    for index, quoted, name in _STEP.findall(text):
        if index:
            steps.append(int(index))
        else:
            step = quoted or name
            steps.append(int(step) if step.isdigit() else step)
    return steps


def lookup(document: Any, path: str) -> Any:
    """The value at `path` in `document`, or `_MISSING`."""
    current = document
    for step in _steps(path):
        if isinstance(step, int) and isinstance(current, list) and -len(current) <= step < len(current):
            current = current[step]
        elif isinstance(current, Mapping) and str(step) in current:
            current = current[str(step)]
        else:
            return _MISSING
    return current


def extract(document: Any, output_map: list[OutputMapEntry]) -> tuple[dict[str, Any], list[str]]:
    """The values the output map names (a missing one takes its default, if any) and the keys found nowhere. With no
    output map, the answer itself: its fields when it is an object, else `{"data": answer}`."""
    if not output_map:
        return (dict(document) if isinstance(document, Mapping) else {"data": document}), []
    values: dict[str, Any] = {}
    missing: list[str] = []
    for entry in output_map:
        value = lookup(document, entry.path)
        if value is _MISSING:
            if entry.default is None:
                missing.append(entry.key)
                continue
            value = entry.default
        values[entry.key] = value
    return values, missing
