"""The embedding cache (documents/services/embedding_cache.py, GET/DELETE /kb/index/cache): re-indexing unchanged
chunks embeds nothing, and the counters say so. The routes: tests/api/test_kb.py."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from zengram.documents.domain.models import IndexJobStatus, IndexOperation, IndexOptions
from zengram.documents.wiring import DocumentsContainer

from tests.documents.backends import BACKENDS, documents_container
from tests.support import REPO_ROOT, HashingEmbedder

SAMPLE = REPO_ROOT / "tests" / "data" / "kb_sample"


class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.texts = 0

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.texts += len(texts)
        return super().embed(texts)


def index(kb: DocumentsContainer, folder: Path, *, force: bool = False) -> None:
    queued = kb.indexing.enqueue(str(folder), IndexOperation.INDEX, IndexOptions(force=force))
    assert kb.launcher.wait_idle(60)  # type: ignore[attr-defined]
    assert kb.indexing.job(queued.job.id).status is IndexJobStatus.DONE


@pytest.mark.parametrize("backend", BACKENDS)
def test_forced_reindex_of_an_unchanged_folder_embeds_nothing(backend: str, tmp_path: Path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "project" / "sample")
    folder = tmp_path / "project" / "sample"
    model = CountingEmbedder()
    with documents_container(backend, tmp_path, [tmp_path / "project"], model) as kb:
        assert kb.cache is not None
        index(kb, folder)
        first = model.texts
        after_first = kb.cache.stats()
        assert first > 0 and after_first.misses == first and after_first.entries == first
        index(kb, folder, force=True)  # every file re-chunked and its chunks embedded again: all from the cache
        assert model.texts == first
        stats = kb.cache.stats()
        assert stats.hits >= first and stats.misses == first and stats.entries == first

