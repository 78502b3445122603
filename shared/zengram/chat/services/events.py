"""The memory event log's writer and reader, and the request audit (docs/chat.md, "Memory events" and "Audit").

Recording never fails the request that caused it: the memory write has committed by then, so a log that cannot
be written is logged as a warning and the event is lost (at most once). Retention is enforced here on the
embedded host (old rows pruned at most once an hour per process) and by the table's TTL on DynamoDB."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from zengram.chat.domain.events import (
    AUDIT_RETENTION,
    EVENT_RETENTION,
    AuditEntry,
    MemoryEvent,
    MemoryEventType,
    NewMemoryEvent,
    StreamConfig,
    sse_event,
)
from zengram.chat.domain.memories import SubjectMemory
from zengram.chat.ports import AuditLog, MemoryEventLog
from zengram.kernel.outbox import describe_error
from zengram.kernel.ports import Clock
from zengram.kernel.timestamps import format_timestamp

logger = logging.getLogger(__name__)
PRUNE_EVERY = timedelta(hours=1)


class _Pruner:
    """Calls `prune(now - keep)` at most once per PRUNE_EVERY."""

    def __init__(self, prune: Any, keep: timedelta) -> None:
        self._prune, self._keep = prune, keep
        self._last: datetime | None = None
        self._lock = threading.Lock()

    def maybe(self, now: datetime) -> None:
        with self._lock:
            if self._last is not None and now - self._last < PRUNE_EVERY:
                return
            self._last = now
        try:
            self._prune(now - self._keep)
        except Exception as error:
            logger.warning("pruning old rows failed: %s", describe_error(error))


def created_data(memory: SubjectMemory) -> dict[str, Any]:
    """`memory.created`'s data: core-mnx's fields, plus the source."""
    return {"id": memory.id, "subject_id": memory.subject_id, "text": memory.text, "kind": memory.kind.value,
            "visibility": memory.visibility.value, "importance": memory.importance, "tags": list(memory.tags),
            "source": memory.source.value, "created_at": format_timestamp(memory.created_at)}


class MemoryEvents:
    def __init__(self, log: MemoryEventLog, clock: Clock, stream: StreamConfig | None = None) -> None:
        self._log = log
        self._clock = clock
        self.stream_config = stream or StreamConfig()
        self._pruner = _Pruner(log.prune, EVENT_RETENTION)

    def record(self, project_id: str, subject_id: str,
               events: Sequence[tuple[MemoryEventType, dict[str, Any]]]) -> list[MemoryEvent]:
        """Appends the subject's events in order; [] (and a warning) when the log cannot be written."""
        if not events:
            return []
        now = self._clock.now()
        try:
            recorded = self._log.append([NewMemoryEvent(project_id=project_id, subject_id=subject_id, type=kind,
                                                        data={"subject_id": subject_id, **data}, created_at=now)
                                         for kind, data in events])
        except Exception as error:
            logger.warning("memory events of %s/%s not recorded: %s", project_id, subject_id, describe_error(error))
            return []
        self._pruner.maybe(now)
        return recorded

    def created(self, project_id: str, memory: SubjectMemory, superseded: Sequence[SubjectMemory]) -> None:
        self.record(project_id, memory.subject_id, [
            (MemoryEventType.CREATED, created_data(memory)),
            *[(MemoryEventType.SUPERSEDED, {"id": old.id, "superseded_by": memory.id}) for old in superseded]])

    def changed(self, project_id: str, memory: SubjectMemory, kind: MemoryEventType) -> None:
        self.record(project_id, memory.subject_id, [(kind, {"id": memory.id, "status": memory.status.value})])

    def recalled(self, project_id: str, subject_id: str, chat_id: str | None, memory_ids: Sequence[str]) -> None:
        self.record(project_id, subject_id, [(MemoryEventType.RECALLED, {"id": memory_id, "chat_id": chat_id})
                                             for memory_id in dict.fromkeys(memory_ids)])

    def since(self, project_id: str, subject_id: str, after: int, limit: int | None = None) -> list[MemoryEvent]:
        return self._log.since(project_id, subject_id, after, limit or self.stream_config.batch)

    def position(self, project_id: str, subject_id: str, asked: int | None) -> int:
        """Where a stream starts: after event `asked`, or (None) after the subject's latest event: from now on."""
        return asked if asked is not None else self._log.last(project_id, subject_id)

    async def stream(self, project_id: str, subject_id: str, after: int) -> AsyncIterator[str]:
        """The subject's events after `after` as server-sent events: `connected` (its `id` the position), the
        backlog, then each new event
        as the log is read every `poll` seconds, a `heartbeat` after `heartbeat` quiet seconds; with a `window`, it
        ends once it has delivered events or when the window has passed (a long poll). A log that cannot be read
        ends it with an `error` event (the client resumes with Last-Event-ID)."""
        config = self.stream_config
        yield sse_event("connected", {"project_id": project_id, "subject_id": subject_id, "last_event_id": after,
                                      "timestamp": format_timestamp(self._clock.now())},
                        retry_ms=int(config.poll * 1000) if config.window else None, event_id=after)
        started = quiet_since = time.monotonic()
        while True:
            try:
                found = await asyncio.to_thread(self.since, project_id, subject_id, after)
            except Exception as error:
                logger.warning("memory event stream of %s/%s: %s", project_id, subject_id, describe_error(error))
                yield sse_event("error", {"error": "the event log could not be read; reconnect with Last-Event-ID"})
                return
            for event in found:
                yield event.sse()
                after = event.seq
            now = time.monotonic()
            if found:
                quiet_since = now
                if len(found) == config.batch:
                    continue  # more of the backlog
                if config.window:
                    return  # a long poll answers as soon as it has something
            if config.window and now - started >= config.window:
                return
            if now - quiet_since >= config.heartbeat:
                yield sse_event("heartbeat", {"timestamp": format_timestamp(self._clock.now())})
                quiet_since = now
            await asyncio.sleep(config.poll)


class RequestAudit:
    def __init__(self, log: AuditLog, clock: Clock) -> None:
        self._log = log
        self._clock = clock
        self._pruner = _Pruner(log.prune, AUDIT_RETENTION)

    @property
    def clock(self) -> Clock:
        return self._clock

    def record(self, entry: AuditEntry) -> None:
        try:
            self._log.record(entry)
        except Exception as error:
            logger.warning("audit row of %s %s not recorded: %s", entry.method, entry.route, describe_error(error))
            return
        self._pruner.maybe(entry.created_at)

    def recent(self, project_id: str, limit: int, *, before: str | None = None, subject_id: str | None = None,
               session_id: str | None = None) -> list[AuditEntry]:
        return self._log.recent(project_id, limit, before=before, subject_id=subject_id, session_id=session_id)
