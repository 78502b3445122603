"""The scheduled repair sweep re-indexes records whose index write failed, and reports the backlog it leaves
(index_health.pending_index) as the PendingIndex metric the template's alarm watches."""

from __future__ import annotations

import json
from typing import Any

import pytest
from zengram.assembly.containers import build_container
from zengram.kernel.ports import Embedder
from zengram.memory.domain.models import MemoryType
from zengram.memory.domain.requests import MemoryDraft
from zengram.serverless.handlers import lambda_settings
from zengram.serverless.jobs import repair_handler

from tests.functions.invoke import FakeLambdaContext, load_event


def unreachable(*_: Any) -> None:
    raise ConnectionError("search index unreachable")


def store_while_the_index_is_down(minilm: Embedder, how_many: int) -> None:
    """Records written by a function while the index was unreachable: stored, flagged, not indexed (a function
    answers only once its index write is done, so its answer says so)."""
    writer = build_container(lambda_settings(), embedder=minilm)
    index_write = writer.index.upsert
    writer.index.upsert = unreachable  # type: ignore[method-assign]
    results = writer.memory.store_many([
        MemoryDraft(type=MemoryType.EVENT, content=f"payment run {i} completed", source_agent="billing-bot")
        for i in range(how_many)
    ])
    assert not any(result.indexed for result in results)
    writer.index.upsert = index_write  # type: ignore[method-assign]
    writer.close()


def emitted_metrics(output: str) -> dict[str, list[float]]:
    """The metric values of the CloudWatch EMF lines Powertools printed (but the cold start marker)."""
    values: dict[str, list[float]] = {}
    for line in output.splitlines():
        blob = json.loads(line) if line.startswith("{") else {}
        for directive in blob.get("_aws", {}).get("CloudWatchMetrics", []):
            for metric in (m for m in directive["Metrics"] if m["Name"] != "ColdStart"):
                values.setdefault(metric["Name"], []).extend(blob[metric["Name"]])
    return values


def test_scheduled_event_repairs_pending_records(lambda_environment: str, minilm: Embedder,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    store_while_the_index_is_down(minilm, 25)
    capsys.readouterr()

    # When the schedule fires (on a fresh execution environment, as functions/repair/app.py builds it)
    outcome = repair_handler()(load_event("repair/scheduled_repair.json"), FakeLambdaContext())

    # Then every record is indexed, none is pending, and the metrics say so
    assert outcome == {"repaired": 25, "failed": 0, "parked": 0, "requeued": 0, "stopped": None, "pending_index": 0}
    assert emitted_metrics(capsys.readouterr().out) == {"RecordsRepaired": [25.0], "IndexFailures": [0.0],
                                                        "RecordsParked": [0.0], "PendingIndex": [0.0]}
    checker = build_container(lambda_settings(), embedder=minilm)
    assert checker.outbox.pending_index(100) == []
    assert checker.index.count() == 25
    checker.close()


def test_a_sweep_that_cannot_reach_the_index_reports_the_backlog(lambda_environment: str, minilm: Embedder,
                                                                 capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    store_while_the_index_is_down(minilm, 7)
    capsys.readouterr()
    from zengram.adapters.sqlite import EmbeddedSearchIndex

    monkeypatch.setattr(EmbeddedSearchIndex, "upsert", unreachable)  # the index is still down at the sweep
    outcome = repair_handler()(load_event("repair/scheduled_repair.json"), FakeLambdaContext())
    assert outcome["stopped"] is not None  # the index is unavailable: no record is blamed for it
    assert {key: outcome[key] for key in ("repaired", "failed", "parked", "pending_index")} == {
        "repaired": 0, "failed": 0, "parked": 0, "pending_index": 7}
    assert emitted_metrics(capsys.readouterr().out) == {"RecordsRepaired": [0.0], "IndexFailures": [0.0],
                                                        "RecordsParked": [0.0], "PendingIndex": [7.0]}
