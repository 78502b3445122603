"""Outbound webhook deliveries (docs/chat.md, "Webhooks"): an event POSTed to an integration's endpoint, signed with
its webhook secret, retried with a doubling backoff, every attempt kept in the delivery log."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from zengram.chat.domain.integrations import Integration, auth_headers, render
from zengram.chat.domain.outbound import OutboundRequest
from zengram.chat.domain.tenancy import new_id
from zengram.chat.domain.webhooks import Attempt, Delivery, DeliveryPolicy, canonical_body, retryable, signed_headers
from zengram.chat.ports import IntegrationStore, OutboundHttp
from zengram.kernel.errors import InvalidInput
from zengram.kernel.ports import Clock


class WebhookDeliveries:
    def __init__(self, store: IntegrationStore, outbound: OutboundHttp, clock: Clock, policy: DeliveryPolicy,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._store = store
        self._outbound = outbound
        self._clock = clock
        self._policy = policy
        self._sleep = sleep

    def deliver(self, integration: Integration, event: str, data: Any, event_id: str | None = None) -> Delivery:
        """Sends `{"event", "event_id", "integration_id", "project_id", "created_at", "data"}` until a 2xx answer, a
        refusal that a retry cannot change (4xx), or the policy's last attempt; stores and returns the log."""
        if not integration.endpoint_url:
            raise InvalidInput("endpoint_url", "the integration has none to deliver to")
        if not integration.webhook_secret:
            raise InvalidInput("webhook_secret", "the integration has none to sign deliveries with")
        created = self._clock.now()
        event_id = event_id or new_id("evt")
        body = canonical_body({"event": event, "event_id": event_id, "integration_id": integration.integration_id,
                               "project_id": integration.project_id, "created_at": created.isoformat(), "data": data})
        variables = {"project_id": integration.project_id, "integration_id": integration.integration_id}
        base_headers = {**render(integration.headers_template, variables), **auth_headers(integration)}
        attempts: list[Attempt] = []
        for number in range(1, self._policy.attempts + 1):
            attempt = self._attempt(integration, number, body, event_id, base_headers)
            attempts.append(attempt)
            status = attempt.status_code or 0
            if 200 <= status < 300 or not retryable(status) or number == self._policy.attempts:
                break
            self._sleep(self._policy.wait_after(number))
        delivered = 200 <= (attempts[-1].status_code or 0) < 300
        delivery = Delivery(delivery_id=new_id("dlv"), project_id=integration.project_id,
                            integration_id=integration.integration_id, event_id=event_id, event=event,
                            url=integration.endpoint_url, status="delivered" if delivered else "failed",
                            attempts=attempts, created_at=created, finished_at=self._clock.now())
        self._store.add_delivery(delivery)
        return delivery

    def _attempt(self, integration: Integration, number: int, body: str, event_id: str,
                 base_headers: Mapping[str, str]) -> Attempt:
        at = self._clock.now()
        headers = {**base_headers, **signed_headers(integration.webhook_secret or "", body, at, event_id),
                   "x-mnx-delivery-attempt": str(number)}
        response = self._outbound.send(OutboundRequest("POST", integration.endpoint_url or "", "endpoint_url",
                                                       headers, integration.timeout_ms / 1000, body=body))
        error = response.error if response.status == 0 else None if response.ok else f"answered {response.status}"
        return Attempt(attempt=number, at=at, status_code=response.status or None, error=error,
                       duration_ms=response.duration_ms)

    def log(self, project_id: str, integration_id: str, limit: int) -> list[Delivery]:
        return self._store.deliveries(project_id, integration_id, limit)
