"""The embedded search index with in-memory keyword postings always on (`keyword_memory_min_rows=0`): the
`SearchIndex` contract holds whether keyword searches ask FTS5 or score the postings derived from it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from zengram.bootstrap import build_embedded_index
from zengram.ports import Clock
from zengram.settings import Settings

from tests.support import API_KEY

NAME = "sqlite-memory-keywords"


@contextmanager
def _search_index(folder: Path, _clock: Clock) -> Iterator[Any]:
    settings = Settings(data_dir=folder / "data", api_key=API_KEY, search_index="embedded", keyword_memory_min_rows=0)
    index = build_embedded_index(settings)
    try:
        yield index
    finally:
        index.close()


ADAPTERS = {"search_index": _search_index}
