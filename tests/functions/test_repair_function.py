"""The scheduled repair sweep re-indexes records whose index write failed."""

from __future__ import annotations

import importlib
from typing import Any

from zengram.bootstrap import build_container
from zengram.domain.models import MemoryType
from zengram.domain.requests import MemoryDraft
from zengram.ports import Embedder
from zengram.settings import Settings

from tests.functions.invoke import FakeLambdaContext, load_event


def unreachable(*_: Any) -> None:
    raise ConnectionError("search index unreachable")


def test_scheduled_event_repairs_pending_records(lambda_environment: str, minilm: Embedder) -> None:
    # Given records written while the index was unreachable (stored, flagged, not indexed)
    writer = build_container(Settings(), embedder=minilm)
    index_write = writer.index.upsert
    writer.index.upsert = unreachable  # type: ignore[method-assign]
    results = writer.memory.store_many([
        MemoryDraft(type=MemoryType.EVENT, content=f"payment run {i} completed", source_agent="billing-bot")
        for i in range(25)
    ])
    assert not any(result.indexed for result in results)
    writer.index.upsert = index_write  # type: ignore[method-assign]
    writer.close()

    # When the schedule fires
    module = importlib.import_module("functions.repair.app")
    outcome = module.handler(load_event("repair/scheduled_repair.json"), FakeLambdaContext())

    # Then every record is indexed and none is pending
    assert outcome == {"repaired": 25, "failed": 0, "parked": 0, "requeued": 0, "stopped": None}
    checker = build_container(Settings(), embedder=minilm)
    assert checker.outbox.pending_index(100) == []
    assert checker.index.count() == 25
    checker.close()
