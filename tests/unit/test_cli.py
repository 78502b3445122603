"""The `zengram` command line: reindex after a model change, key location."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner
from zengram.assembly.containers import build_container
from zengram.embedded.cli import app
from zengram.kernel.errors import EmbeddingMismatch
from zengram.kernel.ports import Embedder
from zengram.memory.domain.models import MemoryChanges, MemoryType
from zengram.memory.domain.requests import MemoryDraft, SearchRequest
from zengram.settings import Settings

from tests.support import HashingEmbedder, TickingClock


def test_reindex_re_embeds_with_the_configured_model(tmp_path: Path, minilm: Embedder) -> None:
    data_dir = tmp_path / "data"
    settings = Settings(data_dir=data_dir, api_key="k")
    old = build_container(settings, embedder=HashingEmbedder(model_id="test:old"), clock=TickingClock())
    old.memory.store(MemoryDraft(type=MemoryType.EVENT, content="The staging cluster runs on Kubernetes",
                                 source_agent="ops"))
    old.close()
    with pytest.raises(EmbeddingMismatch):
        build_container(settings, embedder=minilm, check_index=True)

    result = CliRunner().invoke(app, ["reindex", "--data-dir", str(data_dir)], env={"BRAIN_API_KEY": "k"})

    assert result.exit_code == 0, result.output
    assert "indexed 1 memories with minilm:all-MiniLM-L6-v2" in result.output
    reopened = build_container(settings, embedder=minilm)
    hits = reopened.memory.search(SearchRequest(q="which container orchestrator does staging use")).hits
    assert [hit.memory.content for hit in hits] == ["The staging cluster runs on Kubernetes"]
    reopened.close()


def test_keys_says_where_the_generated_key_lives(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["keys", "--data-dir", str(tmp_path)], env={"BRAIN_API_KEY": ""})
    assert result.exit_code == 0
    key_file = tmp_path / "api-key"
    assert str(key_file) in result.output
    assert key_file.stat().st_mode & 0o777 == 0o600


def test_a_blank_configured_key_counts_as_unset() -> None:
    assert Settings(api_key="   ").api_key is None
    assert Settings(api_key="secret").api_key is not None


def test_backfill_entities_extracts_what_older_memories_lack(tmp_path: Path, minilm: Embedder) -> None:
    # Given memories stored before extraction existed: no entities on the record, none in the registry
    data_dir = tmp_path / "data"
    settings = Settings(data_dir=data_dir, api_key="k", writer_entities=False)  # the text's entities only
    old = build_container(settings, embedder=minilm, clock=TickingClock())
    legacy = [old.memory.store(MemoryDraft(type=MemoryType.EVENT, content=content, source_agent="ops")).memory
              for content in ("Moved the billing API to Next.js", "Lunch was late today")]
    for memory in legacy:
        old.memory.after_change([old.records.update(memory.id, MemoryChanges(entities=[]), memory.created_at)])
    assert old.entities.detail("nextjs").entity.mention_count == 0  # registered once, now linked to nothing
    old.close()

    # When the backfill runs (twice: the second finds nothing left to do)
    runner = CliRunner()
    env = {"BRAIN_API_KEY": "k", "ZENGRAM_WRITER_ENTITIES": "false"}
    first = runner.invoke(app, ["backfill-entities", "--data-dir", str(data_dir)], env=env)
    second = runner.invoke(app, ["backfill-entities", "--data-dir", str(data_dir)], env=env)

    # Then the memory naming Next.js has it again, in the record, the registry and the search entity filter
    assert first.exit_code == 0, first.output
    assert "entities added to 1 memories; 1 name none" in first.output
    assert "entities added to 0 memories; 1 name none" in second.output
    reopened = build_container(settings, embedder=minilm)
    try:
        assert [ref.name for ref in reopened.memory.get(legacy[0].id).entities] == ["Next.js"]
        assert reopened.entities.detail("nextjs").entity.mention_count == 1
        hits = reopened.memory.search(SearchRequest(q="billing", entity="Next.js")).hits
        assert [hit.memory.id for hit in hits] == [legacy[0].id]
    finally:
        reopened.close()


def test_repair_retries_the_parked_records_when_asked(tmp_path: Path, minilm: Embedder) -> None:
    # Given a memory the repair sweep parked (its document refused until something was fixed)
    data_dir = tmp_path / "data"
    settings = Settings(data_dir=data_dir, api_key="k")
    brain = build_container(settings, embedder=minilm, clock=TickingClock())
    memory = brain.memory.store(MemoryDraft(type=MemoryType.EVENT, content="The nightly backup finished",
                                            source_agent="ops")).memory
    brain.index.count()  # (any index call waits for the index write behind the store's answer)
    brain.outbox.record_index_failure(memory.id, memory.revision, "IndexRejected: refused", memory.created_at,
                                     park_after=1)
    brain.close()
    runner = CliRunner()

    # A plain repair leaves it parked; --retry-parked puts it back in the queue and indexes it
    plain = runner.invoke(app, ["repair", "--data-dir", str(data_dir)], env={"BRAIN_API_KEY": "k"})
    retried = runner.invoke(app, ["repair", "--retry-parked", "--data-dir", str(data_dir)], env={"BRAIN_API_KEY": "k"})

    assert plain.exit_code == 0, plain.output
    assert "indexed 0; 0 failed" in plain.output
    assert retried.exit_code == 0, retried.output
    assert "1 parked record(s) put back in the queue" in retried.output and "indexed 1;" in retried.output
    reopened = build_container(settings, embedder=minilm)
    try:
        assert reopened.outbox.parked_index(10) == [] and reopened.outbox.pending_index(10) == []
        assert [hit.memory.id for hit in reopened.memory.search(SearchRequest(q="nightly backup")).hits] == [memory.id]
    finally:
        reopened.close()
