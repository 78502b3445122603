"""A full disk: every write is a 507 naming the cause (nothing written, nothing lost), /health says degraded, and
both recover once a write finds room again."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.assembly.containers import Container, build_container
from zengram.embedded.app import build_embedded_app
from zengram.settings import Settings

from tests.api.helpers import store
from tests.support import API_KEY, HashingEmbedder, TickingClock


class FullDisk:
    """A connection whose COMMIT fails as SQLite's does on a full disk, while `full` is set."""

    full = False

    def __init__(self, inner: sqlite3.Connection) -> None:
        self._inner = inner

    def execute(self, sql: str, *args: Any) -> Any:
        if FullDisk.full and sql == "COMMIT":
            raise sqlite3.OperationalError("database or disk is full")
        return self._inner.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@pytest.fixture
def api(settings: Settings, clock: TickingClock, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    real = SQLiteDatabase.connection

    def connection(self: SQLiteDatabase) -> Any:
        # The records file fills up; the search index's file (written behind the answers, on a thread of its own)
        # would otherwise meet the full disk at an unforeseeable moment and open its circuit for 30 s.
        inner = real(self)
        return FullDisk(inner) if self._path == settings.records_path else inner

    monkeypatch.setattr(SQLiteDatabase, "connection", connection)
    brain: Container = build_container(settings, embedder=HashingEmbedder(), clock=clock)
    try:
        with TestClient(build_embedded_app(settings, brain), headers={"x-api-key": API_KEY}) as client:
            yield client
    finally:
        FullDisk.full = False
        brain.close()


def test_a_full_disk_is_507_with_the_cause_and_health_degraded(api: TestClient) -> None:
    kept = store(api, "Written before the disk filled up")
    FullDisk.full = True
    try:
        refused = store(api, "Written on a full disk", expect=507)
        assert "database or disk is full" in refused["error"]
        health = api.get("/health")
        assert health.status_code == 503 and health.json()["status"] == "degraded"
        assert health.json()["checks"]["records"] == "down"
        assert api.get(f"/memory/{kept['id']}").status_code == 200  # reads still answer
    finally:
        FullDisk.full = False
    assert store(api, "Written once there is room again")["id"]
    assert api.get("/health").json()["status"] == "ok"
