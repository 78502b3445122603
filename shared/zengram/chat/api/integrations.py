"""Integrations: `/integrations` as the Mnexium SDK calls it (list, create, get, update, delete, test, sync,
webhook), and outbound webhook deliveries with their log (docs/chat.md, "Integrations")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Path, Query, Request
from pydantic import BaseModel, ConfigDict, StringConstraints
from starlette.concurrency import run_in_threadpool

from zengram.chat.api.deps import ChatDep, ProjectDep
from zengram.chat.api.schemas import CHAT_ERRORS, DeletedBody
from zengram.chat.api.schemas.integrations import (
    DeliveriesBody,
    DeliveryBody,
    DeliveryOut,
    ExecutionBody,
    ExecutionOut,
    IntegrationBody,
    IntegrationOut,
    IntegrationsBody,
    WebhookOut,
)
from zengram.chat.domain.integrations import INTEGRATION_ID_PATTERN, IntegrationCreate, IntegrationUpdate, Target
from zengram.chat.domain.request_values import JsonValue
from zengram.chat.domain.tenancy import ChatId, SubjectId

router = APIRouter(prefix="/api/v1", tags=["chat: integrations"], responses=CHAT_ERRORS)
IntegrationPath = Annotated[str, Path(pattern=INTEGRATION_ID_PATTERN)]


class ExecutionIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    subject_id: SubjectId | None = None
    chat_id: ChatId | None = None


class DeliveryIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    event: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:-]{1,100}$")]
    data: JsonValue = None
    event_id: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:-]{1,200}$")] | None = None


@router.get("/integrations", response_model=IntegrationsBody)
def list_integrations(chat: ChatDep, project: ProjectDep, include_inactive: bool = False) -> IntegrationsBody:
    found = [IntegrationOut.of(one) for one in chat.integrations.list(project, include_inactive)]
    return IntegrationsBody(integrations=found, count=len(found))


@router.post("/integrations", status_code=201, response_model=IntegrationBody)
def create_integration(body: IntegrationCreate, chat: ChatDep, project: ProjectDep) -> IntegrationBody:
    """Its endpoint must be one the operator allowed (ZENGRAM_OUTBOUND_ALLOW); secrets are kept, never answered."""
    return IntegrationBody(integration=IntegrationOut.of(chat.integrations.create(project, body)))


@router.get("/integrations/{integration_id}", response_model=IntegrationBody)
def get_integration(integration_id: IntegrationPath, chat: ChatDep, project: ProjectDep) -> IntegrationBody:
    return IntegrationBody(integration=IntegrationOut.of(chat.integrations.get(project, integration_id)))


@router.patch("/integrations/{integration_id}", response_model=IntegrationBody)
def update_integration(integration_id: IntegrationPath, body: IntegrationUpdate, chat: ChatDep,
                       project: ProjectDep) -> IntegrationBody:
    return IntegrationBody(integration=IntegrationOut.of(chat.integrations.update(project, integration_id, body)))


@router.delete("/integrations/{integration_id}", response_model=DeletedBody)
def delete_integration(integration_id: IntegrationPath, chat: ChatDep, project: ProjectDep) -> DeletedBody:
    chat.integrations.delete(project, integration_id)
    return DeletedBody(ok=True, deleted=True)


def _target(body: ExecutionIn | None) -> Target:
    given = body or ExecutionIn()
    return Target(given.subject_id, given.chat_id)


@router.post("/integrations/{integration_id}/test", response_model=ExecutionBody)
def test_integration(integration_id: IntegrationPath, chat: ChatDep, project: ProjectDep,
                     body: Annotated[ExecutionIn | None, Body()] = None) -> ExecutionBody:
    """Calls the endpoint and reads the values through the output map; keeps nothing."""
    done = chat.integrations.test(project, integration_id, _target(body))
    return ExecutionBody(result=ExecutionOut(**vars(done)))


@router.post("/integrations/{integration_id}/sync", response_model=ExecutionBody)
def sync_integration(integration_id: IntegrationPath, chat: ChatDep, project: ProjectDep,
                     body: Annotated[ExecutionIn | None, Body()] = None) -> ExecutionBody:
    """Calls the endpoint and keeps the values as the integration's `integration_values` record."""
    done = chat.integrations.sync(project, integration_id, _target(body))
    return ExecutionBody(result=ExecutionOut(**vars(done)))


@router.post("/integrations/{integration_id}/webhook", response_model=WebhookOut)
async def integration_webhook(integration_id: IntegrationPath, request: Request, chat: ChatDep,
                              project: ProjectDep) -> WebhookOut:
    """A signed push (`x-mnx-webhook-timestamp`, `x-mnx-webhook-signature`: the SDK's `sign_webhook`), taken once
    per `x-event-id`; its values are kept like a sync's."""
    raw = await request.body()
    headers = {name.lower(): value for name, value in request.headers.items()}
    outcome = await run_in_threadpool(chat.integrations.receive, project, integration_id, headers, raw)
    return WebhookOut(**vars(outcome))


@router.post("/integrations/{integration_id}/deliveries", status_code=201, response_model=DeliveryBody)
def deliver_webhook(integration_id: IntegrationPath, body: DeliveryIn, chat: ChatDep,
                    project: ProjectDep) -> DeliveryBody:
    """POSTs a signed event to the integration's endpoint, retrying with backoff; answers the delivery's log
    (`status` delivered or failed, each attempt)."""
    integration = chat.integrations.get(project, integration_id)
    return DeliveryBody(delivery=DeliveryOut.of(chat.webhooks.deliver(integration, body.event, body.data,
                                                                      body.event_id)))


@router.get("/integrations/{integration_id}/deliveries", response_model=DeliveriesBody)
def list_deliveries(integration_id: IntegrationPath, chat: ChatDep, project: ProjectDep,
                    limit: Annotated[int, Query(ge=1, le=200)] = 50) -> DeliveriesBody:
    """The integration's delivery log, newest first."""
    chat.integrations.get(project, integration_id)
    found = [DeliveryOut.of(delivery) for delivery in chat.webhooks.log(project, integration_id, limit)]
    return DeliveriesBody(deliveries=found, count=len(found))
