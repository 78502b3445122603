"""The embedded host's file watcher for watched document folders: one daemon thread runs `watchfiles` (inotify on
Linux, FSEvents on macOS, polling elsewhere) over the folders with `watch_mode: auto`, reports each batch of changes
to `FolderWatching`, and queues the re-index of the folders quiet for their debounce. The set of watched folders is
read again every `refresh_seconds`; when it changed, the watch restarts on the new set."""

from __future__ import annotations

import logging
import os
import threading
import time

from zengram.documents.services.watching import FolderWatching

logger = logging.getLogger(__name__)


class WatchfilesFolderWatcher:
    def __init__(self, watching: FolderWatching, *, refresh_seconds: float = 2.0, tick_ms: int = 250) -> None:
        self._watching = watching
        self._refresh_seconds = refresh_seconds
        self._tick_ms = tick_ms
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="zengram-kb-watcher", daemon=True)

    def start(self) -> WatchfilesFolderWatcher:
        self._thread.start()
        self._watching.watcher_running = True
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        self._watching.watcher_running = False

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                folders = [path for path in self._watching.refresh() if os.path.isdir(path)]
                if folders:
                    self._watch(folders)
                else:
                    self._stop.wait(self._refresh_seconds)
            except Exception:  # a store hiccup or a folder vanishing mid-setup: try again on the next round
                logger.exception("the document folder watcher failed; retrying")
                self._stop.wait(self._refresh_seconds)

    def _watch(self, folders: list[str]) -> None:
        """Watches `folders` until the watched set changes or the watcher stops."""
        import watchfiles

        refreshed = time.monotonic()
        for changes in watchfiles.watch(*folders, stop_event=self._stop, yield_on_timeout=True,
                                        rust_timeout=self._tick_ms, debounce=self._tick_ms, raise_interrupt=False,
                                        watch_filter=None, ignore_permission_denied=True):
            if changes:
                self._watching.changed(path for _change, path in changes)
            self._watching.run_due()
            if time.monotonic() - refreshed >= self._refresh_seconds:
                refreshed = time.monotonic()
                current = [path for path in self._watching.refresh() if os.path.isdir(path)]
                if current != folders:
                    return
