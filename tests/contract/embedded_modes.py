"""The embedded search index built with its settings overridden: the `backend_sqlite_*` modes that run the
`SearchIndex` contract with an in-memory structure always on (the HNSW graph, the keyword postings)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from zengram.adapters.factories import build_embedded_index
from zengram.kernel.ports import Clock
from zengram.settings import Settings

from tests.support import API_KEY


def embedded_index_with(**overrides: Any) -> Callable[[Path, Clock], AbstractContextManager[Any]]:
    """The `search_index` adapter fixture of an embedded index built with `overrides` on its settings."""

    @contextmanager
    def search_index(folder: Path, _clock: Clock) -> Iterator[Any]:
        settings = Settings(data_dir=folder / "data", api_key=API_KEY, search_index="embedded", **overrides)
        index = build_embedded_index(settings)
        try:
            yield index
        finally:
            index.close()

    return search_index
