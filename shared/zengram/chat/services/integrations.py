"""Integrations (docs/chat.md, "Integrations"): CRUD per project, `test` and `sync` (a call to the endpoint, its
values read through the output map; `sync` keeps them as a record), and signed inbound webhooks."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from zengram.chat.domain.data_requests import RecordInsert, RecordQueryIn, SchemaDefine
from zengram.chat.domain.integrations import (
    Integration,
    IntegrationCreate,
    IntegrationUpdate,
    Target,
    auth_headers,
    extract,
    render,
)
from zengram.chat.domain.outbound import OutboundPolicy, OutboundRequest
from zengram.chat.domain.records import FieldDef, RecordVisibility
from zengram.chat.domain.tenancy import new_id
from zengram.chat.domain.webhooks import verify
from zengram.chat.ports import IntegrationStore, OutboundHttp
from zengram.chat.services.records import RecordService
from zengram.kernel.errors import Conflict, InvalidInput, NotFound, ZengramError
from zengram.kernel.ports import Clock

logger = logging.getLogger(__name__)
VALUES_TYPE = "integration_values"  # the record type sync and webhooks keep values in
VALUES_SCHEMA = SchemaDefine(type_name=VALUES_TYPE, display_name="Integration values", description=(
    "What integrations pulled (sync) or were pushed (webhook): one record per integration and target."), fields={
    "integration_id": FieldDef(type="string", required=True), "integration_name": FieldDef(type="string"),
    "target": FieldDef(type="string", required=True), "subject_id": FieldDef(type="string"),
    "chat_id": FieldDef(type="string"), "values": FieldDef(type="object", required=True),
    "source": FieldDef(type="string", required=True), "synced_at": FieldDef(type="datetime", required=True)})


@dataclass
class Execution:
    """What `test` and `sync` answer (the SDK's IntegrationExecutionResult)."""

    ok: bool
    reason: str
    integration_id: str
    scope: str
    values: dict[str, Any] = field(default_factory=dict)
    latency_ms: int = 0
    cache_written: bool = False
    status_code: int | None = None
    missing: list[str] = field(default_factory=list)
    record_id: str | None = None


@dataclass
class WebhookOutcome:
    ok: bool
    deduplicated: bool
    integration_id: str
    values: dict[str, Any] = field(default_factory=dict)
    keys_written: list[str] = field(default_factory=list)
    latency_ms: int = 0
    record_id: str | None = None


class IntegrationService:
    def __init__(self, store: IntegrationStore, outbound: OutboundHttp, policy: OutboundPolicy,
                 records: RecordService, clock: Clock) -> None:
        self._store = store
        self._outbound = outbound
        self._policy = policy
        self._records = records
        self._clock = clock

    # -- configuration ---------------------------------------------------------------------------------------

    def create(self, project_id: str, body: IntegrationCreate) -> Integration:
        integration_id = body.integration_id or new_id("int")
        if self._store.get(project_id, integration_id) is not None:
            raise Conflict(f"integration {integration_id} already exists")
        integration = Integration.new(integration_id, project_id, body, self._clock.now())
        self._check_endpoint(integration)
        return self._store.put(integration)

    def list(self, project_id: str, include_inactive: bool) -> list[Integration]:
        return [found for found in self._store.of_project(project_id) if include_inactive or found.is_active]

    def get(self, project_id: str, integration_id: str) -> Integration:
        found = self._store.get(project_id, integration_id)
        if found is None:
            raise NotFound(f"integration {integration_id} not found")
        return found

    def update(self, project_id: str, integration_id: str, body: IntegrationUpdate) -> Integration:
        integration = self.get(project_id, integration_id).updated(body, self._clock.now())
        self._check_endpoint(integration)
        return self._store.put(integration)

    def delete(self, project_id: str, integration_id: str) -> None:
        if not self._store.delete(project_id, integration_id):
            raise NotFound(f"integration {integration_id} not found")

    def _check_endpoint(self, integration: Integration) -> None:
        """An endpoint outside the operator's allow-list is refused when it is configured, not first when called."""
        if integration.endpoint_url:
            self._policy.check_url(integration.endpoint_url, "endpoint_url")

    # -- pulling ---------------------------------------------------------------------------------------------

    def test(self, project_id: str, integration_id: str, target: Target) -> Execution:
        """Calls the endpoint and reads the values; keeps nothing."""
        return self._pull(self.get(project_id, integration_id), target)

    def sync(self, project_id: str, integration_id: str, target: Target) -> Execution:
        """Calls the endpoint and keeps the values as the integration's record for the target."""
        integration = self.get(project_id, integration_id)
        outcome = self._pull(integration, target)
        if outcome.ok:
            outcome.record_id = self._keep(integration, target, outcome.values, "sync")
            outcome.cache_written = True
        self._store.put(integration.synced(self._clock.now(), None if outcome.ok else outcome.reason))
        return outcome

    def sync_due(self, limit: int = 20) -> int:
        """Runs the scheduled syncs that are due (the embedded worker's sweep; the learning function's schedule on
        AWS); each is tried once per period, its failure kept in `last_sync_error`. Returns how many ran."""
        now = self._clock.now()
        ran = 0
        for integration in self._store.due(now, limit):
            try:
                self.sync(integration.project_id, integration.integration_id, Target())
            except ZengramError as error:  # refused (e.g. an address no longer allowed): wait a period
                logger.warning("scheduled sync of %s refused: %s", integration.integration_id, error)
                self._store.put(integration.synced(now, str(error)))
            ran += 1
        return ran

    def _pull(self, integration: Integration, target: Target) -> Execution:
        if integration.mode == "webhook" or not integration.endpoint_url:
            raise InvalidInput("mode", "a webhook integration has no endpoint to call (mode 'pull' or 'both' has)")
        if not integration.is_active:
            raise Conflict(f"integration {integration.integration_id} is inactive (is_active: false)")
        target.checked(integration)
        variables = {"project_id": integration.project_id, "integration_id": integration.integration_id,
                     "subject_id": target.subject_id or "", "chat_id": target.chat_id or ""}
        headers = {**render(integration.headers_template, variables), **auth_headers(integration)}
        params = {name: str(value) for name, value in render(integration.query_template, variables).items()}
        body = None
        if integration.method != "GET" and integration.body_template:
            body = json.dumps(render(integration.body_template, variables))
            headers.setdefault("content-type", "application/json")
        response = self._outbound.send(OutboundRequest(
            integration.method, render(integration.endpoint_url, variables), "endpoint_url", headers,
            integration.timeout_ms / 1000, params=params, body=body))
        done = Execution(ok=False, reason="", integration_id=integration.integration_id, scope=integration.scope,
                         latency_ms=response.duration_ms, status_code=response.status or None)
        if response.status == 0:
            done.reason = f"unreachable: {response.error}"
        elif not response.ok:
            done.reason = f"the endpoint answered {response.status}"
        else:
            try:
                document = json.loads(response.body or b"null")
            except ValueError:
                done.reason = "the endpoint's answer is not JSON"
                return done
            done.values, done.missing = extract(document, integration.output_map)
            done.ok = True
            done.reason = "ok" if not done.missing else f"ok; not in the answer: {', '.join(done.missing)}"
        return done

    # -- pushed to us ----------------------------------------------------------------------------------------

    def receive(self, project_id: str, integration_id: str, headers: Mapping[str, str], raw_body: bytes) -> \
            WebhookOutcome:
        """A signed push: verified with the webhook secret, taken once per `x-event-id`, its values kept."""
        started = time.monotonic()
        integration = self.get(project_id, integration_id)
        if integration.mode == "pull":
            raise InvalidInput("mode", "a pull integration takes no webhooks (mode 'webhook' or 'both' does)")
        if not integration.webhook_secret:
            raise InvalidInput("webhook_secret", "the integration has none, so no push can be verified")
        if not integration.is_active:
            raise Conflict(f"integration {integration_id} is inactive (is_active: false)")
        now = self._clock.now()
        payload = verify(integration.webhook_secret, headers.get("x-mnx-webhook-timestamp"),
                         headers.get("x-mnx-webhook-signature"), raw_body, now)
        outcome = WebhookOutcome(ok=True, deduplicated=False, integration_id=integration_id)
        event_id = headers.get("x-event-id")
        if event_id and not self._store.first_seen(project_id, integration_id, event_id[:200], now):
            outcome.deduplicated = True
            return outcome
        target = Target(headers.get("x-mnx-subject-id") or None, headers.get("x-mnx-chat-id") or None)
        outcome.values, _ = extract(payload, integration.output_map)
        outcome.record_id = self._keep(integration, target.checked(integration), outcome.values, "webhook")
        outcome.keys_written = sorted(outcome.values)
        outcome.latency_ms = int((time.monotonic() - started) * 1000)
        return outcome

    # -- where values are kept -------------------------------------------------------------------------------

    def _keep(self, integration: Integration, target: Target, values: dict[str, Any], source: str) -> str:
        """Upserts the record of (integration, target) in `integration_values` (defining the type on first use); a
        subject's values are private to that subject."""
        if self._maybe_schema(integration.project_id) is None:
            self._records.define_schema(integration.project_id, VALUES_SCHEMA)
        key = target.key(integration)
        data = {"integration_id": integration.integration_id, "integration_name": integration.name, "target": key,
                "values": values, "source": source, "synced_at": self._clock.now().isoformat(),
                **({"subject_id": target.subject_id} if target.subject_id else {}),
                **({"chat_id": target.chat_id} if target.chat_id else {})}
        found = self._records.query(integration.project_id, VALUES_TYPE, RecordQueryIn(
            where={"integration_id": integration.integration_id, "target": key}, limit=1))
        if found:  # the fields replace theirs, `values` whole: keys the endpoint no longer answers go
            return self._records.update(integration.project_id, VALUES_TYPE, found[0].record_id, data).record_id
        private = integration.scope == "subject" and target.subject_id is not None
        return self._records.insert(integration.project_id, VALUES_TYPE, RecordInsert(
            data=data, owner_id=target.subject_id if private else None,
            visibility=RecordVisibility.PRIVATE if private else RecordVisibility.PUBLIC)).record_id

    def _maybe_schema(self, project_id: str) -> object | None:
        try:
            return self._records.schema(project_id, VALUES_TYPE)
        except NotFound:
            return None
