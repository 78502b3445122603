"""Knowledge views: the session briefing, and export / import of whole records."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import ValidationError

from zengram.kernel.content import Scrubber
from zengram.kernel.errors import Forbidden, ZengramError
from zengram.kernel.keys import TenantScope
from zengram.kernel.outbox import describe_error
from zengram.kernel.ports import Clock
from zengram.kernel.validation import describe_validation_errors
from zengram.memory.domain.entities import EntityRef, MentionCount, most_mentioned
from zengram.memory.domain.lifecycle import memory_from_draft
from zengram.memory.domain.models import (
    GLOBAL_CLIENT,
    Importance,
    ImportKind,
    ImportStatus,
    Memory,
    MemoryType,
    RecordQuery,
)
from zengram.memory.domain.requests import BriefingFormat, BriefingRequest, ExportRequest, ImportRecord, ImportRequest
from zengram.memory.ports import RecordStore
from zengram.memory.services.entity_links import EntityLinker
from zengram.memory.services.indexing import IndexSync

if TYPE_CHECKING:
    from zengram.kernel.ports import Vectors

logger = logging.getLogger(__name__)

# A briefing ranks every memory of its window, so it reads at most this many (newest first) to do so.
MAX_BRIEFING_SCAN = 5_000
BRIEFING_TOP_ENTITIES = 15  # as upstream
_IMPORTANCE_RANK = {Importance.CRITICAL: 0, Importance.HIGH: 1, Importance.MEDIUM: 2, Importance.LOW: 3}


@dataclass(frozen=True)
class Briefing:
    memories: list[Memory]  # importance, then newest first; at most `limit`
    matched: int  # memories of the window that passed every filter (before `limit`)
    in_period: int  # memories of the window, before the agent and importance filters
    by_type: dict[str, int]
    active_agents: list[str]  # every agent standing behind a matched memory (its writer and corroborators)
    mentioned_clients: list[str]  # the matched memories' clients but `global`
    scan_truncated: bool
    top_entities: list[MentionCount] = field(default_factory=list)

    def bucket(self, type_: MemoryType) -> list[Memory]:
        return [memory for memory in self.memories if memory.type is type_]


@dataclass(frozen=True)
class ExportPage:
    memories: list[Memory]
    has_more: bool


@dataclass(frozen=True)
class ImportItem:
    index: int
    status: ImportStatus
    id: str | None = None
    reason: str | None = None  # why it was skipped
    error: str | None = None  # why it failed


@dataclass
class ImportReport:
    items: list[ImportItem] = field(default_factory=list)  # one per record of the batch, in order
    indexed: bool = True

    def count(self, status: ImportStatus) -> int:
        return sum(1 for item in self.items if item.status is status)


class KnowledgeService:
    def __init__(self, records: RecordStore, clock: Clock, index_sync: IndexSync,
                 entities: EntityLinker | None = None, *, scrubber: Scrubber,
                 embed_executor: Executor | None = None, import_chunk: int) -> None:
        self._store = records
        self._scrubber = scrubber
        self._clock = clock
        self._index_sync = index_sync
        self._entities = entities
        self._embed_executor = embed_executor  # an import's embeddings start there while its records are written
        # An import's batch is embedded and indexed in chunks of this many records (`Settings.import_embed_chunk`),
        # so that indexing one chunk overlaps the embedding of the next.
        self._import_chunk = import_chunk

    # -- briefing -------------------------------------------------------------------------------------

    def briefing(self, request: BriefingRequest, scope: TenantScope = TenantScope.EVERYONE) -> Briefing:
        """Active memories created since `request.since`, the requesting agent's own left out, ranked by
        importance then recency. `compact` also leaves out low-importance events. Only `scope`'s clients."""
        tenants = scope.narrow(request.client_id)
        excluded = request.excluded_agent
        skip_low_events = request.format is BriefingFormat.COMPACT
        # One read of the newest MAX_BRIEFING_SCAN (+1 to know whether the window holds more): paging by
        # offset would make DynamoDB read the skipped items again for every page.
        window = self._store.query(RecordQuery(client_id=tenants.client_id, client_ids=tenants.client_ids,
                                               since=request.since, limit=MAX_BRIEFING_SCAN + 1))
        scan_truncated = len(window) > MAX_BRIEFING_SCAN
        matched = [
            memory for memory in window[:MAX_BRIEFING_SCAN]
            if memory.source_agent != excluded
            and not (skip_low_events and memory.type is MemoryType.EVENT and memory.importance is Importance.LOW)
        ]
        ranked = sorted(matched, key=_briefing_rank)
        return Briefing(
            memories=ranked[: request.limit],
            matched=len(matched),
            in_period=len(window[:MAX_BRIEFING_SCAN]),
            by_type={type_.value: sum(1 for m in matched if m.type is type_) for type_ in MemoryType},
            active_agents=sorted({agent for memory in matched for agent in [memory.source_agent,
                                                                             *memory.observed_by]}),
            mentioned_clients=sorted({memory.client_id for memory in matched} - {GLOBAL_CLIENT}),
            scan_truncated=scan_truncated,
            top_entities=most_mentioned((memory.entities for memory in matched), BRIEFING_TOP_ENTITIES),
        )

    # -- export ---------------------------------------------------------------------------------------

    def export(self, request: ExportRequest, scope: TenantScope = TenantScope.EVERYONE) -> ExportPage:
        """Whole records, newest first (upstream's order); inactive ones (superseded and deleted) unless
        `active_only`. Only `scope`'s clients."""
        tenants = scope.narrow(request.client_id)
        found = self._store.query(RecordQuery(
            client_id=tenants.client_id, client_ids=tenants.client_ids, type=request.type, since=request.since,
            include_inactive=not request.active_only, include_deleted=not request.active_only,
            oldest_first=request.order == "oldest", limit=request.limit + 1, offset=request.offset,
        ))
        return ExportPage(memories=found[: request.limit], has_more=len(found) > request.limit)

    # -- import ---------------------------------------------------------------------------------------

    def import_batch(self, request: ImportRequest, *, approved: bool = False,
                     scope: TenantScope = TenantScope.EVERYONE) -> ImportReport:
        """POST /export/import. Import replaces live memories, so it needs the operator's approval (`approved`, or
        the body's `operator_approved`), else Forbidden before anything is read. Each record is validated on its
        own: an invalid one fails alone (its error names the field), the others are imported as `import_records`
        says."""
        if not (request.operator_approved or approved):
            raise Forbidden("operator_approved: import replaces live memories; send operator_approved=true "
                            "(in the body or as a query parameter) to confirm")
        valid: list[tuple[int, ImportRecord]] = []
        invalid: list[ImportItem] = []
        for index, raw in enumerate(request.data):
            try:
                valid.append((index, _import_record(raw)))
            except ValidationError as error:
                raw_id = raw.get("id") if isinstance(raw, dict) else None
                invalid.append(ImportItem(index, ImportStatus.FAILED, id=raw_id if isinstance(raw_id, str) else None,
                                          error=describe_validation_errors(error.errors())))
            except ValueError as error:
                invalid.append(ImportItem(index, ImportStatus.FAILED, error=str(error)))
        report = self.import_records(valid, scope)
        report.items = sorted([*report.items, *invalid], key=lambda item: item.index)
        return report

    def import_records(self, records: Sequence[tuple[int, ImportRecord]],
                       scope: TenantScope = TenantScope.EVERYONE) -> ImportReport:
        """Stores each record as given (scrubbed again, hash recomputed), in order, then indexes the ones
        stored: live ones re-embedded with the current embedder, inactive ones indexed as inactive,
        deleted ones kept out of the index. A record of a client outside `scope` refuses the whole batch
        (Forbidden) before anything is written."""
        for index, record in records:
            scope.require(record.client_id or GLOBAL_CLIENT, field=f"data[{index}].client_id")
        report = ImportReport()
        chunks = [self._prepared(chunk) for chunk in _chunked(records, self._import_chunk)]
        stored = [self._store_all(chunk.memories, report) for chunk in chunks]
        self._link_entities([memory for chunk_stored in stored for memory in chunk_stored])
        for chunk, chunk_stored in zip(chunks, stored, strict=True):
            # Chunk by chunk as its vectors arrive: the index writes of one overlap the embedding of the next.
            report.indexed = self._index_sync.refresh(chunk_stored, _vectors_of(chunk.ahead)) and report.indexed
        return report

    def _prepared(self, records: Sequence[tuple[int, ImportRecord]]) -> _PreparedChunk:
        """The chunk's memories, their embedding already started: the first passes run while later chunks are
        still being scrubbed and extracted, and the whole batch's records are written."""
        memories = [(index, self._memory_of(record)) for index, record in records]
        return _PreparedChunk(memories, self._embed_ahead([memory for _, memory in memories]))

    def _store_all(self, memories: Sequence[tuple[int, Memory]], report: ImportReport) -> list[Memory]:
        """Stores each memory in order, reporting each one's outcome; the ones imported, to index."""
        stored: list[Memory] = []
        for index, memory in memories:
            try:
                outcome = self._store.import_memory(memory)  # one record, one transaction: whole or nothing
            except ZengramError as error:
                report.items.append(ImportItem(index, ImportStatus.FAILED, id=memory.id, error=str(error)))
                continue
            except Exception:
                # Each record has its own outcome: one the store cannot take fails alone, reported (its cause
                # logged, not sent), and the batch goes on; a 500 would hide which records were stored.
                logger.exception("import of record %d (%s) failed", index, memory.id)
                report.items.append(ImportItem(index, ImportStatus.FAILED, id=memory.id,
                                               error="record: the record store could not store it"))
                continue
            if outcome.kind is ImportKind.IMPORTED:
                stored.append(memory)
                report.items.append(ImportItem(index, ImportStatus.IMPORTED, id=memory.id))
            else:
                report.items.append(ImportItem(index, ImportStatus.SKIPPED, id=memory.id,
                                               reason=_skip_reason(outcome.kind, memory, outcome.existing_id)))
        return stored

    def _embed_ahead(self, memories: Sequence[Memory]) -> Future[dict[str, Vectors]] | None:
        """Starts embedding the memories the import will index (live ones whose id is new) while their records
        are written (see `IndexSync.embed_ahead`). A record skipped after all only costs its embedding."""
        if self._embed_executor is None:
            return None
        existing = self._store.get_many([memory.id for memory in memories])
        wanted = [memory for memory in memories if not memory.is_deleted and memory.id not in existing]
        return self._index_sync.embed_ahead(wanted, self._embed_executor)

    def _link_entities(self, memories: Sequence[Memory]) -> None:
        """Imported memories join the entity registry (derived data: a failure is logged, not fatal)."""
        if self._entities is None:
            return
        for memory in memories:
            try:
                self._entities.link(memory)
            except Exception:
                logger.exception("entity registry update failed for imported memory %s", memory.id)

    def _entities_of(self, record: ImportRecord, content: str) -> list[EntityRef]:
        """The record's own entities (an export carries them; a name holding a credential is no entity and is
        dropped); extracted anew when it has none listed."""
        if record.entities is not None or self._entities is None:
            return [ref for ref in record.entities or [] if self._scrubber.scrub(ref.name) == ref.name]
        return self._entities.extract(content, record.source_agent, record.resolved_client_id)

    def _memory_of(self, record: ImportRecord) -> Memory:
        now = self._clock.now()
        content = self._scrubber.scrub(record.content)
        return memory_from_draft(record, self._scrubber, content=content, client_id=record.client_id or GLOBAL_CLIENT,
                                 now=now, entities=self._entities_of(record, content))


@dataclass(frozen=True)
class _PreparedChunk:
    memories: list[tuple[int, Memory]]  # (index in the batch, memory), in the batch's order
    ahead: Future[dict[str, Vectors]] | None  # their vectors, being computed


def _chunked(records: Sequence[tuple[int, ImportRecord]], size: int) -> list[Sequence[tuple[int, ImportRecord]]]:
    return [records[start:start + size] for start in range(0, len(records), size)]


def _vectors_of(ahead: Future[dict[str, Vectors]] | None) -> dict[str, Vectors]:
    """The vectors embedded ahead; none if that failed (indexing then embeds, or leaves the records pending)."""
    if ahead is None:
        return {}
    try:
        return ahead.result()
    except Exception as error:
        logger.warning("embedding ahead of an import failed; indexing embeds again: %s", describe_error(error))
        return {}


def _import_record(raw: object) -> ImportRecord:
    """One record of an import batch, validated (ValueError for one that is not even an object)."""
    if not isinstance(raw, dict):
        raise ValueError("record: must be a JSON object")
    return ImportRecord.model_validate(raw)


def _briefing_rank(memory: Memory) -> tuple[int, float, str]:
    # Importance first, then newest first; the id breaks ties so the order is total.
    return _IMPORTANCE_RANK[memory.importance], -memory.created_at.timestamp(), memory.id


def _skip_reason(kind: ImportKind, memory: Memory, existing_id: str | None) -> str:
    if kind is ImportKind.DUPLICATE_ID:
        return "duplicate id: a memory with this id already exists"
    if kind is ImportKind.DUPLICATE_CONTENT:
        return f"duplicate content: active memory {existing_id} has the same content in {memory.client_id}"
    label = f"key '{memory.key}'" if memory.type is MemoryType.FACT else f"subject '{memory.subject}'"
    return f"{label} is held by active memory {existing_id} in {memory.client_id}"
