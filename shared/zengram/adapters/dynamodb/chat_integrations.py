"""The AWS `IntegrationStore` (chat/ports.py): a project's integrations in one partition (`INTEG#<project>`, sort key
the id), each integration's delivery log in its own (`INTEGDLV#<project>#<integration>`, by time) and the inbound
event ids it took in another (`INTEGEVT#<project>#<integration>`, written only if absent). A scheduled
integration is also in the `pending-index` GSI as `CHAT_INTEG_SYNC`, sorted by when its sync is due."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from zengram.adapters.dynamodb.chat_items import (
    BODY,
    ChatTable,
    WriteConflict,
    key,
    part,
    pending,
    position,
    put_if_absent,
)
from zengram.adapters.dynamodb.items import string
from zengram.adapters.dynamodb.table import make_client
from zengram.chat.domain.integrations import Integration
from zengram.chat.domain.webhooks import Delivery
from zengram.kernel.timestamps import format_timestamp

DUE_MARK = "CHAT_INTEG_SYNC"


def integrations_partition(project_id: str) -> str:
    return f"INTEG#{part(project_id)}"


def deliveries_partition(project_id: str, integration_id: str) -> str:
    return f"INTEGDLV#{part(project_id)}#{part(integration_id)}"


def events_partition(project_id: str, integration_id: str) -> str:
    return f"INTEGEVT#{part(project_id)}#{part(integration_id)}"


class DynamoDBIntegrationStore:
    def __init__(self, table_name: str, *, region: str | None = None, client: Any | None = None) -> None:
        self._table = ChatTable(client or make_client(region=region), table_name)

    def put(self, integration: Integration) -> Integration:
        item = {**key(integrations_partition(integration.project_id), integration.integration_id),
                BODY: string(integration.model_dump_json())}
        due = integration.next_sync_at
        if due is not None:
            item.update(pending(DUE_MARK, due, f"{part(integration.project_id)}#{part(integration.integration_id)}"))
        self._table.put_all([item])
        return integration

    def get(self, project_id: str, integration_id: str) -> Integration | None:
        item = self._table.get(key(integrations_partition(project_id), integration_id))
        return Integration.model_validate_json(item[BODY]["S"]) if item is not None else None

    def of_project(self, project_id: str) -> list[Integration]:
        found = [Integration.model_validate_json(item[BODY]["S"])
                 for item in self._table.partition(integrations_partition(project_id))]
        return sorted(found, key=lambda integration: (integration.created_at, integration.integration_id))

    def delete(self, project_id: str, integration_id: str) -> bool:
        return self._table.delete_returning(key(integrations_partition(project_id), integration_id)) is not None

    def add_delivery(self, delivery: Delivery) -> None:
        self._table.put_all([{**key(deliveries_partition(delivery.project_id, delivery.integration_id),
                                    position(delivery.created_at, delivery.delivery_id)),
                              BODY: string(delivery.model_dump_json())}])

    def deliveries(self, project_id: str, integration_id: str, limit: int) -> list[Delivery]:
        items = self._table.partition(deliveries_partition(project_id, integration_id), newest_first=True,
                                      limit=limit)
        return [Delivery.model_validate_json(item[BODY]["S"]) for item in items]

    def first_seen(self, project_id: str, integration_id: str, event_id: str, at: datetime) -> bool:
        item = {**key(events_partition(project_id, integration_id), event_id), "seen_at": string(format_timestamp(at))}
        try:
            self._table.write([put_if_absent(item)])
        except WriteConflict:
            return False
        return True

    def due(self, at: datetime, limit: int) -> list[Integration]:
        keys = self._table.pending_keys(DUE_MARK, limit, until=f"{format_timestamp(at)}#~")
        found = [Integration.model_validate_json(item[BODY]["S"]) for item in self._table.fresh(keys)]
        return [one for one in found if (when := one.next_sync_at) is not None and when <= at]  # still due
