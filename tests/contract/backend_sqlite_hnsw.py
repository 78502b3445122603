"""The embedded search index with its HNSW graph always on (`vector_ann_min_rows=0`): the `SearchIndex` contract
holds whether broad vector searches scan the matrix or re-score the graph's candidates."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from zengram.bootstrap import build_embedded_index
from zengram.ports import Clock
from zengram.settings import Settings

from tests.support import API_KEY

NAME = "sqlite-hnsw"


@contextmanager
def _search_index(folder: Path, _clock: Clock) -> Iterator[Any]:
    settings = Settings(data_dir=folder / "data", api_key=API_KEY, search_index="embedded", vector_ann_min_rows=0)
    index = build_embedded_index(settings)
    try:
        yield index
    finally:
        index.close()


ADAPTERS = {"search_index": _search_index}
