"""New memories' index writes applied just after the write has answered, with every index read waiting for them.

A new memory's record is committed (and marked pending in the outbox) before `POST /memory` answers; its
embedding and index write are what most of a write costs. `IndexWriteBehind` applies those index writes on one
thread, in the order the records were stored, so one client's next request is served while the previous
memory is still being embedded. The guarded index keeps that invisible: every call on it (a search, a count, a
delete, an update's attributes) first `drain`s, waiting until every index write queued before it is applied,
so a search made after a write's response finds that write, and a delete cannot overtake the create it
removes. A write-behind that fails leaves its records pending for the repair sweep, as an index outage does;
nothing is lost if the process dies meanwhile (the records are stored and pending).

Only for an index this process alone serves (the embedded one): another process, such as a Lambda function
that searches OpenSearch, could not wait for this queue (docs/decisions/0040-index-writes-behind-the-response.md).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait

from zengram.kernel.outbox import describe_error

logger = logging.getLogger(__name__)


class IndexWriteBehind:
    """Index writes applied in order on one thread, at most `limit` waiting: past that, a writer waits for room
    (so a burst of writes cannot queue unbounded work, nor make a search wait for more than `limit` of them)."""

    def __init__(self, limit: int, index_closed: Callable[[], bool]) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="zengram-index-behind")
        self._room = threading.BoundedSemaphore(limit)
        self._index_closed = index_closed
        self._lock = threading.Lock()
        self._last: Future[None] | None = None
        self._applying = threading.local()

    def accepts(self) -> bool:
        """Whether a write may answer before its index write: only while the index's circuit is closed, so a
        write made while the index is down still answers `stored_in.vector: false` at once."""
        return self._index_closed()

    def submit(self, apply: Callable[[], object]) -> None:
        """Queues `apply` after everything queued so far; waits for room when `limit` are waiting."""
        self._room.acquire()
        with self._lock:
            try:
                self._last = self._executor.submit(self._run, apply)
            except BaseException:
                self._room.release()
                raise

    def drain(self) -> None:
        """Returns once every index write queued before this call is applied. On the applying thread itself (an
        index write calling the index) it returns at once: what it waits for is its own caller."""
        if getattr(self._applying, "active", False):
            return
        with self._lock:
            last = self._last
        if last is not None:
            wait([last])  # one thread, in order: the last one done means all of them are

    def close(self) -> None:
        """Applies what is queued, then stops the thread."""
        self.drain()
        self._executor.shutdown(wait=True)

    def _run(self, apply: Callable[[], object]) -> None:
        self._applying.active = True
        try:
            apply()
        except Exception as error:  # the apply leaves its records pending; the queue must go on
            logger.warning("a write-behind index write failed; its records stay pending: %s", describe_error(error))
        finally:
            self._applying.active = False
            self._room.release()
