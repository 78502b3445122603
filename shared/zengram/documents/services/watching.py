"""Watched folders (`watch_mode: auto`): a change under one queues a re-index of it once the folder has been quiet
for its debounce. The host says what changed: the embedded host's file watcher (`adapters/system/folder_watcher.py`)
and, on AWS, the S3 event notifications the watch function receives (`serverless/documents.py`). The re-index is an
ordinary `index` job (unchanged files skipped, files gone dropped) with the options of the folder's last job; an
identical job still pending absorbs further requests."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

from zengram.documents.domain.files import EXCLUDED_DIRS, kind_of
from zengram.documents.domain.models import IndexedFolder
from zengram.documents.services.indexing import DocumentIndexing, Enqueued
from zengram.kernel.errors import ZengramError

logger = logging.getLogger(__name__)
DEFAULT_DEBOUNCE_SECONDS = 30.0  # Agent Brain's default


def relative_inside(folder: IndexedFolder, path: str) -> str | None:
    """`path` relative to `folder` when the folder's indexing would consider it (an indexable file, not in a
    skipped folder, not below a non-recursive folder's own level); None otherwise."""
    prefix = folder.folder_path.rstrip("/") + "/"
    if not path.startswith(prefix):
        return None
    relative = path[len(prefix):]
    parts = PurePosixPath(relative).parts
    if not parts or any(part in EXCLUDED_DIRS for part in parts[:-1]) or kind_of(relative) is None:
        return None
    if not folder.recursive and len(parts) > 1:
        return None
    return relative


class FolderWatching:
    """Which folders are watched and when each is due. Thread-safe: a watcher thread reports changes while
    requests change the folders."""

    def __init__(self, indexing: DocumentIndexing, *, default_debounce: float = DEFAULT_DEBOUNCE_SECONDS,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._indexing = indexing
        self._default_debounce = default_debounce
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._pending: dict[str, float] = {}  # folder path -> when its last change was seen
        self._folders: dict[str, IndexedFolder] = {}
        self.watcher_running = False  # set by the host's watcher while it runs (/kb/health/status, /health/config)
        self._closed = False

    def close(self) -> None:
        """No re-index is queued after this (the host is shutting down)."""
        with self._lock:
            self._closed = True

    def refresh(self) -> list[str]:
        """Reads the watched folders again; returns their paths."""
        watched = {folder.folder_path: folder for folder in self._indexing.folders() if folder.watch_mode == "auto"}
        with self._lock:
            self._folders = watched
            self._pending = {path: at for path, at in self._pending.items() if path in watched}
        return sorted(watched)

    @property
    def watched(self) -> list[str]:
        with self._lock:
            return sorted(self._folders)

    def changed(self, paths: Iterable[str]) -> list[str]:
        """Marks the watched folders holding any of `paths` as changed now; returns those folders."""
        now = self._monotonic()
        touched: set[str] = set()
        with self._lock:
            for path in paths:
                for folder in self._folders.values():
                    if relative_inside(folder, path) is not None:
                        self._pending[folder.folder_path] = now
                        touched.add(folder.folder_path)
        return sorted(touched)

    def run_due(self, *, immediately: bool = False) -> list[Enqueued]:
        """Queues a re-index of every changed folder quiet for its debounce (`immediately`: of every changed one)."""
        now = self._monotonic()
        with self._lock:
            if self._closed:
                return []
            due = [self._folders[path] for path, at in self._pending.items()
                   if immediately or now - at >= self._debounce(self._folders[path])]
            for folder in due:
                self._pending.pop(folder.folder_path, None)
        queued = []
        for folder in due:
            try:
                queued.append(self._indexing.reindex(folder))
            except ZengramError as error:  # e.g. the folder is gone from disk, or left the allowed roots
                logger.warning("watched folder %s was not re-indexed: %s", folder.folder_path, error)
        return queued

    def _debounce(self, folder: IndexedFolder) -> float:
        return float(folder.watch_debounce_seconds) if folder.watch_debounce_seconds else self._default_debounce
