"""Records: schemas (JSON Schema validated), CRUD, exact-field queries, hybrid search over each record's text
projection, what `records.recall` injects and what `records.learn` writes."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from zengram.chat.domain.data_requests import RecordInsert, RecordQueryIn, SchemaDefine
from zengram.chat.domain.learning import ExtractedRecord
from zengram.chat.domain.recall_calibration import Considered, below_cutoff, beyond_limit, calibrated_relevance
from zengram.chat.domain.records import (
    DataRecord,
    RecordQuerySpec,
    RecordSchema,
    check_fields,
    check_type_name,
)
from zengram.chat.domain.scopes import record_scope
from zengram.chat.domain.tenancy import new_id
from zengram.chat.ports import RecordBase
from zengram.chat.services.indexing import ChatIndexSync
from zengram.kernel.calibration import IDENTITY, Calibration
from zengram.kernel.content import Scrubber
from zengram.kernel.errors import InvalidInput, NotFound
from zengram.kernel.fusion import fuse
from zengram.kernel.ports import Clock, SearchIndex
from zengram.kernel.search import SearchFilters

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RecordHit:
    record: DataRecord
    similarity: float


@dataclass
class LearnedRecords:
    """What record learning wrote (ids) and what it had to leave out (with why)."""

    written: list[str] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)


class RecordService:
    def __init__(self, store: RecordBase, index_sync: ChatIndexSync, index: SearchIndex, clock: Clock, *,
                 scrubber: Scrubber, search_fetch: int = 50, calibration: Calibration = IDENTITY) -> None:
        self._calibration = calibration
        self._store = store
        self._sync = index_sync
        self._index = index
        self._clock = clock
        self._scrubber = scrubber
        self._fetch = search_fetch

    # -- schemas ---------------------------------------------------------------------------------------------

    def define_schema(self, project_id: str, body: SchemaDefine) -> RecordSchema:
        check_type_name(body.type_name)
        check_fields(body.fields)
        now = self._clock.now()
        return self._store.put_schema(RecordSchema(project_id=project_id, type_name=body.type_name,
                                                   fields=dict(body.fields), display_name=body.display_name,
                                                   description=body.description, created_at=now, updated_at=now))

    def schema(self, project_id: str, type_name: str) -> RecordSchema:
        schema = self._store.schema(project_id, type_name)
        if schema is None:
            raise NotFound(f"record schema '{type_name}' not found")
        return schema

    def schemas(self, project_id: str) -> list[RecordSchema]:
        return self._store.schemas(project_id)

    # -- records ---------------------------------------------------------------------------------------------

    def insert(self, project_id: str, type_name: str, body: RecordInsert) -> DataRecord:
        schema = self.schema(project_id, type_name)
        data = self._scrubber.scrub_value(body.data)
        schema.validate_data(data)
        now = self._clock.now()
        record = self._store.insert(DataRecord(
            record_id=new_id("rec"), project_id=project_id, type_name=type_name, owner_id=body.owner_id,
            visibility=body.visibility, collaborators=list(body.collaborators), data=data, created_at=now,
            updated_at=now))
        self._sync.write([record])
        return record

    def get(self, project_id: str, type_name: str, record_id: str) -> DataRecord:
        record = self._store.get(project_id, type_name, record_id)
        if record is None or record.is_deleted:
            raise NotFound(f"record {record_id} of '{type_name}' not found")
        return record

    def update(self, project_id: str, type_name: str, record_id: str, changes: Mapping[str, Any]) -> DataRecord:
        """A partial merge (a null removes a field), validated as a whole against the schema."""
        schema = self.schema(project_id, type_name)
        current = self.get(project_id, type_name, record_id)
        merged = current.merged(self._scrubber.scrub_value(dict(changes)), self._clock.now())
        schema.validate_data(merged.data)
        saved = self._store.save(merged, current.revision)
        self._sync.write([saved])
        return saved

    def delete(self, project_id: str, type_name: str, record_id: str) -> None:
        current = self.get(project_id, type_name, record_id)
        saved = self._store.save(current.deleted(self._clock.now()), current.revision)
        self._sync.write([saved])

    def query(self, project_id: str, type_name: str, body: RecordQueryIn) -> list[DataRecord]:
        self.schema(project_id, type_name)
        spec = RecordQuerySpec(where=body.where, order_by=body.order_by, limit=body.limit, offset=body.offset)
        return spec.apply(self._store.records(project_id, type_name))

    def search(self, project_id: str, type_name: str, query: str, limit: int) -> list[RecordHit]:
        self.schema(project_id, type_name)
        return self._search(project_id, [type_name], query, limit, subject_id=None, visible_only=False)

    def recall(self, project_id: str, subject_id: str, query: str, tables: Sequence[str] | None, *, limit: int,
               min_similarity: float) -> list[RecordHit]:
        """The records `records.recall` injects: of the chosen schemas (all when None), visible to the subject."""
        return self.recall_considering(project_id, subject_id, query, tables, limit=limit,
                                       min_similarity=min_similarity)[0]

    def recall_considering(self, project_id: str, subject_id: str, query: str, tables: Sequence[str] | None, *,
                           limit: int, min_similarity: float) -> tuple[list[RecordHit], list[Considered]]:
        """As `recall`, with every candidate considered, each cut one with why (for the trace)."""
        names = list(tables) if tables is not None else [schema.type_name for schema in self.schemas(project_id)]
        for name in names:
            self.schema(project_id, name)
        hits: list[RecordHit] = []
        considered: list[Considered] = []
        for hit, (cosine, share) in self._ranked(project_id, names, query, subject_id=subject_id, visible_only=True):
            reason = None
            if hit.similarity < min_similarity:
                reason = below_cutoff(hit.similarity, min_similarity, "ZENGRAM_CHAT_RECORDS_MIN_SIMILARITY")
            elif len(hits) >= limit:
                reason = beyond_limit(limit, "ZENGRAM_CHAT_RECORDS_LIMIT")
            else:
                hits.append(hit)
            considered.append(Considered(hit.record.record_id, f"{hit.record.type_name} {hit.record.data}",
                                         hit.similarity, cosine, share, reason=reason))
        return hits, considered

    def _search(self, project_id: str, type_names: Sequence[str], query: str, limit: int, *, subject_id: str | None,
                visible_only: bool) -> list[RecordHit]:
        ranked = self._ranked(project_id, type_names, query, subject_id=subject_id, visible_only=visible_only)
        return [hit for hit, _ in ranked[:limit]]

    def _ranked(self, project_id: str, type_names: Sequence[str], query: str, *, subject_id: str | None,
                visible_only: bool) -> list[tuple[RecordHit, tuple[float | None, float]]]:
        """Every candidate record of both paths, most relevant first (calibrated as subject memories are), with
        its cosine and keyword share."""
        if not type_names:
            return []
        filters = SearchFilters(client_id=project_id, scopes=tuple(record_scope(project_id, t) for t in type_names))
        vector = self._sync.embed([query])[0]
        candidates = fuse({
            "vector": [(hit.id, hit.score) for hit in self._index.vector_search(vector, filters, self._fetch)],
            "keyword": [(hit.id, hit.score) for hit in self._index.keyword_search(query, filters, self._fetch)]})
        records = {record_id: record for record_id, record in self._store.get_many(list(candidates)).items()
                   if not record.is_deleted and record.project_id == project_id and record.type_name in type_names
                   and (not visible_only or record.visible_to(subject_id))}
        best = max((c.scores.get("keyword", 0.0) for c in candidates.values() if c.id in records), default=0.0)
        ranked = []
        for record_id, record in records.items():
            cosine = candidates[record_id].cosine
            share = candidates[record_id].scores.get("keyword", 0.0) / best if best > 0 else 0.0
            ranked.append((RecordHit(record, calibrated_relevance(cosine, share, self._calibration)), (cosine, share)))
        ranked.sort(key=lambda pair: (-pair[0].similarity, pair[0].record.record_id))
        return ranked

    # -- learning --------------------------------------------------------------------------------------------

    def upsert_learned(self, project_id: str, subject_id: str, extracted: Sequence[ExtractedRecord],
                       tables: Sequence[str] | None) -> LearnedRecords:
        """Writes what an LLM extracted: an update when it names a record of the project (or the data's required
        fields match one exactly), else an insert. Unknown schemas and invalid data are refused and reported."""
        learned = LearnedRecords()
        for item in extracted:
            try:
                if tables is not None and item.type_name not in tables:
                    raise InvalidInput("type_name", f"'{item.type_name}' is not among the selected tables")
                schema = self.schema(project_id, item.type_name)
                data = schema.known_fields(item.data)
                existing = self._existing(project_id, schema, item.record_id, data)
                if existing is not None:
                    record = self.update(project_id, schema.type_name, existing.record_id, data)
                else:
                    record = self.insert(project_id, schema.type_name, RecordInsert(data=data, owner_id=subject_id))
                learned.written.append(record.record_id)
            except (InvalidInput, NotFound) as error:
                logger.info("learned record refused: %s", error)
                learned.refused.append({"type_name": item.type_name, "error": str(error)})
        return learned

    def _existing(self, project_id: str, schema: RecordSchema, record_id: str | None,
                  data: Mapping[str, Any]) -> DataRecord | None:
        if record_id is not None:
            found = self._store.get(project_id, schema.type_name, record_id)
            if found is not None and not found.is_deleted:
                return found
        required = {name: data.get(name) for name, definition in schema.fields.items() if definition.required}
        if not required or any(value is None for value in required.values()):
            return None
        matches = RecordQuerySpec(where=required, limit=1).apply(self._store.records(project_id, schema.type_name))
        return matches[0] if matches else None
