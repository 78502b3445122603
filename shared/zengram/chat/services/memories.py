"""Subject memories: create with semantic versioning, read, search and recall, edit, forget, restore."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from zengram.chat.domain.data_requests import MemoryCreate, MemoryPatch
from zengram.chat.domain.events import MemoryEventType
from zengram.chat.domain.memories import (
    MemoryKind,
    MemorySource,
    MemoryStatus,
    Neighbour,
    RecallPolicy,
    SubjectMemory,
    VersioningPolicy,
    Visibility,
    decide_version,
    recall_score,
    relevance,
    similarity_of,
)
from zengram.chat.domain.recall_calibration import Considered, below_cutoff, beyond_limit
from zengram.chat.domain.scopes import project_scope, subject_scope
from zengram.chat.domain.tenancy import new_id
from zengram.chat.ports import SubjectMemoryStore
from zengram.chat.services.indexing import ChatIndexSync
from zengram.kernel.content import Scrubber, content_hash
from zengram.kernel.errors import NotFound
from zengram.kernel.fusion import fuse
from zengram.kernel.outbox import describe_error
from zengram.kernel.ports import Clock, SearchIndex
from zengram.kernel.search import SearchFilters

if TYPE_CHECKING:
    from zengram.chat.services.events import MemoryEvents

logger = logging.getLogger(__name__)
NEIGHBOURS = 20  # nearest memories versioning compares a new one with
FALLBACK_LIMIT = 200  # with the index down, versioning compares with this many of the subject's newest memories


@dataclass(frozen=True)
class NewMemory:
    """A memory to create, from the API or from learning."""

    subject_id: str
    text: str
    kind: MemoryKind = MemoryKind.FACT
    visibility: Visibility = Visibility.PRIVATE
    importance: int = 50
    confidence: float = 1.0
    is_temporal: bool = False
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    source: MemorySource = MemorySource.EXPLICIT
    chat_id: str | None = None

    @classmethod
    def of(cls, body: MemoryCreate) -> NewMemory:
        source, metadata = body.source_and_metadata()
        given = body.model_dump(include={"kind", "visibility", "importance", "confidence", "is_temporal", "tags"},
                                exclude_none=True)
        return cls(subject_id=body.subject_id, text=body.text, metadata=metadata, source=source, **given)


@dataclass(frozen=True)
class CreateOutcome:
    """Created (with what it superseded), or skipped as a duplicate of `duplicate_of`."""

    memory: SubjectMemory | None
    superseded: list[SubjectMemory] = field(default_factory=list)
    duplicate_of: SubjectMemory | None = None
    similarity: float | None = None  # to the duplicate
    versioning: str = "on"  # "on", "off" (no_supersede) or why it could not run


@dataclass(frozen=True)
class RecallHit:
    memory: SubjectMemory
    score: float  # relevance × confidence × decay × importance
    relevance: float


Evidence = tuple[float | None, float]  # a candidate's cosine and keyword share
RECALL_CUTOFF, RECALL_LIMIT = "ZENGRAM_CHAT_RECALL_MIN_RELEVANCE", "ZENGRAM_CHAT_RECALL_LIMIT"


@dataclass(frozen=True)
class Recalled:
    """A completion's recall: the hits injected, and every candidate considered (zengram.chat.domain.
    recall_calibration.Considered), for the trace."""

    hits: list[RecallHit]
    considered: list[Considered]


class SubjectMemoryService:
    def __init__(self, store: SubjectMemoryStore, index_sync: ChatIndexSync, index: SearchIndex, clock: Clock, *,
                 scrubber: Scrubber, versioning: VersioningPolicy, recall_policy: RecallPolicy,
                 search_fetch: int = 50) -> None:
        self._store = store
        self._sync = index_sync
        self._index = index
        self._clock = clock
        self._scrubber = scrubber
        self._versioning = versioning
        self._recall = recall_policy
        self._fetch = search_fetch
        self._events: MemoryEvents | None = None

    def attach_events(self, events: MemoryEvents) -> None:
        """Where created, superseded, updated, deleted, restored and recalled memories are told (the event log)."""
        self._events = events

    # -- writes ----------------------------------------------------------------------------------------------

    def create(self, project_id: str, new: NewMemory, *, no_supersede: bool = False) -> CreateOutcome:
        """Scrubs, then versions against the subject's active memories (semantics.md): a duplicate is skipped,
        conflicting memories of the same kind are superseded, and the new one is stored and indexed."""
        text = self._scrubber.scrub(new.text)
        vector = self._sync.embed([text])[0]
        neighbours, versioning = ([], "off") if no_supersede else self._neighbours(project_id, new.subject_id, vector)
        decision = decide_version(new.kind, neighbours, self._versioning, text)
        if decision.duplicate_of is not None:
            return CreateOutcome(None, duplicate_of=decision.duplicate_of.memory,
                                 similarity=decision.duplicate_of.similarity, versioning=versioning)
        now = self._clock.now()
        memory = SubjectMemory(
            id=new_id("mem"), project_id=project_id, subject_id=new.subject_id, text=text,
            text_hash=content_hash(text), kind=new.kind, importance=new.importance, visibility=new.visibility,
            confidence=new.confidence, source=new.source, is_temporal=new.is_temporal,
            tags=[self._scrubber.scrub(tag) for tag in new.tags], metadata=self._scrubber.scrub_value(new.metadata),
            chat_id=new.chat_id, created_at=now, updated_at=now,
            supersedes=[n.memory.id for n in decision.supersede],
        )
        written = self._store.create(memory, [n.memory.superseded(memory.id, now) for n in decision.supersede])
        if written.duplicate is not None:  # the same text arrived meanwhile
            return CreateOutcome(None, duplicate_of=written.duplicate, similarity=100.0, versioning=versioning)
        assert written.memory is not None
        stored = written.memory.model_copy(update={"supersedes": [m.id for m in written.superseded]})
        self._sync.write([written.memory, *written.superseded], {written.memory.id: vector})
        if self._events is not None:
            self._events.created(project_id, stored, written.superseded)
        return CreateOutcome(stored, superseded=written.superseded, versioning=versioning)

    def _neighbours(self, project_id: str, subject_id: str, vector: Any) -> tuple[list[Neighbour], str]:
        """The subject's active memories nearest the new text, with their similarity: from the index, else (index
        down) by embedding the subject's newest memories here."""
        filters = SearchFilters(client_id=project_id,
                                scopes=(subject_scope(project_id, subject_id), project_scope(project_id)))
        try:
            hits = self._index.vector_search(vector, filters, NEIGHBOURS)
        except Exception as error:
            logger.warning("versioning without the search index (%s): comparing with the subject's newest "
                           "memories", describe_error(error))
            active = self._store.active_of(project_id, subject_id, FALLBACK_LIMIT)
            if not active:
                return [], "index unavailable: no memories to compare with"
            vectors = self._sync.embed([m.text for m in active])
            return ([Neighbour(m, similarity_of(float(v @ vector))) for m, v in zip(active, vectors, strict=True)],
                    "index unavailable: compared with the newest memories")
        found = self._store.get_many([hit.id for hit in hits])
        return [Neighbour(found[hit.id], similarity_of(hit.score)) for hit in hits
                if hit.id in found and found[hit.id].subject_id == subject_id and found[hit.id].is_active], "on"

    def patch(self, project_id: str, memory_id: str, patch: MemoryPatch) -> SubjectMemory:
        """New text is scrubbed (and makes an inferred memory `corrected`); the index follows."""
        current = self.get(project_id, memory_id)
        changes: dict[str, Any] = patch.model_dump(exclude_none=True)
        if "text" in changes:
            text = self._scrubber.scrub(changes["text"])
            changes.update(text=text, text_hash=content_hash(text))
            if current.source is MemorySource.INFERRED:
                changes["source"] = MemorySource.CORRECTED
        if "metadata" in changes:
            changes["metadata"] = self._scrubber.scrub_value(changes["metadata"])
        if "tags" in changes:
            changes["tags"] = [self._scrubber.scrub(tag) for tag in changes["tags"]]
        saved = self._store.save(current.patched(changes, self._clock.now()), current.revision)
        self._sync.write([saved])
        self._tell(project_id, saved, MemoryEventType.UPDATED)
        return saved

    def delete(self, project_id: str, memory_id: str) -> bool:
        """Soft-deletes; False when it was deleted already."""
        current = self._require(project_id, memory_id)
        if current.is_deleted:
            return False
        saved = self._store.save(current.deleted(self._clock.now()), current.revision)
        self._sync.write([saved])
        self._tell(project_id, saved, MemoryEventType.DELETED)
        return True

    def restore(self, project_id: str, memory_id: str) -> tuple[bool, SubjectMemory]:
        """(whether it was superseded and is now active again, the memory)."""
        current = self._require(project_id, memory_id)
        restored = current.restored(self._clock.now())
        if restored is current:
            return False, current
        saved = self._store.save(restored, current.revision)
        self._sync.write([saved])
        self._tell(project_id, saved, MemoryEventType.RESTORED)
        return True, saved

    def _tell(self, project_id: str, memory: SubjectMemory, kind: MemoryEventType) -> None:
        if self._events is not None:
            self._events.changed(project_id, memory, kind)

    def reinforce(self, memory_ids: Sequence[str], *, recalled_by: tuple[str, str, str] | None = None) -> None:
        """Each recall into a conversation: `seen_count` + 1, `last_seen_at` now (which resets decay);
        `recalled_by` (project, subject, chat) records a `memory.recalled` event per memory."""
        if memory_ids:
            self._store.record_recall(memory_ids, self._clock.now())
            if recalled_by is not None and self._events is not None:
                project_id, subject_id, chat_id = recalled_by
                self._events.recalled(project_id, subject_id, chat_id, memory_ids)

    # -- reads -----------------------------------------------------------------------------------------------

    def get(self, project_id: str, memory_id: str) -> SubjectMemory:
        """A memory of the project that is not deleted, else NotFound."""
        memory = self._require(project_id, memory_id)
        if memory.is_deleted:
            raise NotFound(f"memory {memory_id} is deleted")
        return memory

    def _require(self, project_id: str, memory_id: str) -> SubjectMemory:
        memory = self._store.get(memory_id)
        if memory is None or memory.project_id != project_id:  # another tenant's memory does not exist here
            raise NotFound(f"memory {memory_id} not found")
        return memory

    def of_subject(self, project_id: str, subject_id: str, *, limit: int, offset: int, include_superseded: bool = False,
             include_deleted: bool = False) -> list[SubjectMemory]:
        statuses = [MemoryStatus.ACTIVE.value] + ([MemoryStatus.SUPERSEDED.value] if include_superseded else [])
        return self._store.of_subject(project_id, subject_id, statuses=statuses, include_deleted=include_deleted,
                                      limit=limit, offset=offset)

    def superseded(self, project_id: str, subject_id: str, *, limit: int, offset: int) -> list[SubjectMemory]:
        return self._store.of_subject(project_id, subject_id, statuses=[MemoryStatus.SUPERSEDED.value],
                                      include_deleted=False, limit=limit, offset=offset)

    def search(self, project_id: str, subject_id: str, query: str, *, limit: int, min_score: float = 0.0,
               min_relevance: float = 0.0, include_private: bool = True) -> list[RecallHit]:
        """The subject's active memories (its private ones, unless `include_private` is false, and the project's
        shared ones) by recall score, both retrieval paths fused; `min_score` and `min_relevance` drop weak hits."""
        ranked = self._ranked(project_id, subject_id, query, include_private)
        return [hit for hit, _ in ranked if hit.relevance >= min_relevance and hit.score >= min_score][:limit]

    def recall(self, project_id: str, subject_id: str, query: str, *, limit: int, min_relevance: float,
               include_private: bool = True, named: tuple[str, str] = (RECALL_CUTOFF, RECALL_LIMIT)) -> Recalled:
        """What a completion injects (as `search`), and every candidate considered, each cut one with why; `named`:
        where the cutoff and the limit come from, as the reasons say."""
        hits: list[RecallHit] = []
        considered: list[Considered] = []
        for hit, evidence in self._ranked(project_id, subject_id, query, include_private):
            reason = None
            if hit.relevance < min_relevance:
                reason = below_cutoff(hit.relevance, min_relevance, named[0])
            elif len(hits) >= limit:
                reason = beyond_limit(limit, named[1])
            else:
                hits.append(hit)
            considered.append(Considered(hit.memory.id, hit.memory.text, hit.relevance, *evidence, reason=reason))
        return Recalled(hits, considered)

    def _ranked(self, project_id: str, subject_id: str, query: str,
                include_private: bool = True) -> list[tuple[RecallHit, Evidence]]:
        """Every candidate of both paths visible to the subject (its private ones unless `include_private` is
        false), best recall score first, with its evidence."""
        filters = SearchFilters(client_id=project_id,
                                scopes=(subject_scope(project_id, subject_id), project_scope(project_id)))
        vector = self._sync.embed([query])[0]
        candidates = fuse({"vector": [(hit.id, hit.score) for hit in self._index.vector_search(vector, filters,
                                                                                               self._fetch)],
                           "keyword": [(hit.id, hit.score) for hit in self._index.keyword_search(query, filters,
                                                                                                 self._fetch)]})
        memories = {memory_id: memory for memory_id, memory in self._store.get_many(list(candidates)).items()
                    if memory.is_active and memory.visible_to(project_id, subject_id)
                    and (include_private or memory.visibility is not Visibility.PRIVATE)}
        best_keyword = max((c.scores.get("keyword", 0.0) for c in candidates.values() if c.id in memories),
                           default=0.0)
        now = self._clock.now()
        ranked = []
        for memory_id, memory in memories.items():
            candidate = candidates[memory_id]
            share = candidate.scores.get("keyword", 0.0) / best_keyword if best_keyword > 0 else 0.0
            value = relevance(candidate.cosine, share, self._recall)
            ranked.append((RecallHit(memory, recall_score(memory, value, now, self._recall), round(value, 4)),
                           (candidate.cosine, share)))
        ranked.sort(key=lambda pair: (-pair[0].score, pair[0].memory.id))
        return ranked
