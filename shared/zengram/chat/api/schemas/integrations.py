"""Response bodies of the integration routes (field names as the Mnexium SDK reads them; secrets never appear)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from zengram.chat.domain.integrations import Integration
from zengram.chat.domain.webhooks import Delivery


class OutputMapOut(BaseModel):
    key: str
    path: str
    default: Any = None


class IntegrationOut(BaseModel):
    integration_id: str
    project_id: str
    name: str
    description: str
    is_active: bool
    mode: str
    scope: str
    endpoint_url: str | None
    method: str
    timeout_ms: int
    cache_ttl_seconds: int
    allow_live_fetch: bool
    headers_template: dict[str, Any]  # sensitive values masked
    query_template: dict[str, Any]
    body_template: dict[str, Any]
    output_map: list[OutputMapOut]
    auth_config: dict[str, Any]  # sensitive values masked
    auth_type: str
    has_auth_secret: bool
    has_webhook_secret: bool
    created_at: str
    updated_at: str
    schedule_seconds: int  # a scheduled sync every so often (0: none)
    next_sync_at: str | None
    last_synced_at: str | None  # the last sync (scheduled or not) and its error, if it failed
    last_sync_error: str | None

    @classmethod
    def of(cls, integration: Integration) -> IntegrationOut:
        return cls(**integration.public())


class IntegrationBody(BaseModel):
    integration: IntegrationOut


class IntegrationsBody(BaseModel):
    integrations: list[IntegrationOut]
    count: int


class ExecutionOut(BaseModel):
    ok: bool
    reason: str
    integration_id: str
    scope: str
    values: dict[str, Any]
    latency_ms: int
    cache_written: bool
    status_code: int | None  # the endpoint's answer; None when there was none
    missing: list[str]  # output map keys the answer did not hold
    record_id: str | None  # the integration_values record sync wrote


class ExecutionBody(BaseModel):
    result: ExecutionOut


class WebhookOut(BaseModel):
    ok: bool
    deduplicated: bool
    integration_id: str
    values: dict[str, Any]
    keys_written: list[str]
    latency_ms: int
    record_id: str | None


class AttemptOut(BaseModel):
    attempt: int
    at: str
    status_code: int | None
    error: str | None
    duration_ms: int


class DeliveryOut(BaseModel):
    delivery_id: str
    integration_id: str
    event_id: str
    event: str
    url: str
    status: str
    attempts: list[AttemptOut]
    created_at: str
    finished_at: str

    @classmethod
    def of(cls, delivery: Delivery) -> DeliveryOut:
        return cls(**delivery.model_dump(mode="json", exclude={"project_id"}))


class DeliveryBody(BaseModel):
    delivery: DeliveryOut


class DeliveriesBody(BaseModel):
    deliveries: list[DeliveryOut]
    count: int
