"""The embedded `IntegrationStore`: `chat_integrations`, `chat_deliveries` and `chat_webhook_events` tables in the
records file."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.chat.domain.integrations import Integration
from zengram.chat.domain.webhooks import Delivery
from zengram.kernel.timestamps import format_timestamp

SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_integrations (
    project_id TEXT NOT NULL,
    id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    next_sync_at TEXT,
    body TEXT NOT NULL,
    PRIMARY KEY (project_id, id)
);
CREATE INDEX IF NOT EXISTS chat_integrations_due ON chat_integrations (next_sync_at) WHERE next_sync_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS chat_deliveries (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    integration_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chat_deliveries_by_integration
    ON chat_deliveries (project_id, integration_id, created_at, id);
CREATE TABLE IF NOT EXISTS chat_webhook_events (
    project_id TEXT NOT NULL,
    integration_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (project_id, integration_id, event_id)
);
"""


class SQLiteIntegrationStore:
    def __init__(self, path: Path) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    def put(self, integration: Integration) -> Integration:
        with self._db.transaction() as tx:
            due = integration.next_sync_at
            tx.execute("INSERT OR REPLACE INTO chat_integrations (project_id, id, created_at, next_sync_at, body) "
                       "VALUES (?, ?, ?, ?, ?)",
                       (integration.project_id, integration.integration_id, format_timestamp(integration.created_at),
                        format_timestamp(due) if due is not None else None, integration.model_dump_json()))
        return integration

    def get(self, project_id: str, integration_id: str) -> Integration | None:
        row = self._db.connection().execute("SELECT body FROM chat_integrations WHERE project_id = ? AND id = ?",
                                            (project_id, integration_id)).fetchone()
        return Integration.model_validate_json(row["body"]) if row is not None else None

    def of_project(self, project_id: str) -> list[Integration]:
        rows = self._db.connection().execute(
            "SELECT body FROM chat_integrations WHERE project_id = ? ORDER BY created_at, id", (project_id,))
        return [Integration.model_validate_json(row["body"]) for row in rows]

    def delete(self, project_id: str, integration_id: str) -> bool:
        with self._db.transaction() as tx:
            cursor = tx.execute("DELETE FROM chat_integrations WHERE project_id = ? AND id = ?",
                                (project_id, integration_id))
        return cursor.rowcount == 1

    def add_delivery(self, delivery: Delivery) -> None:
        with self._db.transaction() as tx:
            tx.execute("INSERT INTO chat_deliveries (id, project_id, integration_id, created_at, body) "
                       "VALUES (?, ?, ?, ?, ?)",
                       (delivery.delivery_id, delivery.project_id, delivery.integration_id,
                        format_timestamp(delivery.created_at), delivery.model_dump_json()))

    def deliveries(self, project_id: str, integration_id: str, limit: int) -> list[Delivery]:
        rows = self._db.connection().execute(
            "SELECT body FROM chat_deliveries WHERE project_id = ? AND integration_id = ? "
            "ORDER BY created_at DESC, id DESC LIMIT ?", (project_id, integration_id, limit))
        return [Delivery.model_validate_json(row["body"]) for row in rows]

    def first_seen(self, project_id: str, integration_id: str, event_id: str, at: datetime) -> bool:
        try:
            with self._db.transaction() as tx:
                tx.execute("INSERT INTO chat_webhook_events (project_id, integration_id, event_id, seen_at) "
                           "VALUES (?, ?, ?, ?)", (project_id, integration_id, event_id, format_timestamp(at)))
        except sqlite3.IntegrityError:
            return False
        return True

    def due(self, at: datetime, limit: int) -> list[Integration]:
        rows = self._db.connection().execute(
            "SELECT body FROM chat_integrations WHERE next_sync_at IS NOT NULL AND next_sync_at <= ? "
            "ORDER BY next_sync_at, project_id, id LIMIT ?", (format_timestamp(at), limit))
        return [Integration.model_validate_json(row["body"]) for row in rows]
