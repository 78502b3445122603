"""Answering document queries in the five modes, and the health and status figures."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from zengram.documents.domain import fusion
from zengram.documents.domain.files import matches_any
from zengram.documents.domain.fusion import Fused, LegHit
from zengram.documents.domain.graph import SEEDS_MAX, GraphReader, candidate_names, query_intent, walk
from zengram.documents.domain.models import Chunk, CodeEntity, IndexCounts, IndexedFolder, IndexJobStatus
from zengram.documents.domain.query import DocumentQuery, QueryMode, QueryResponse, QueryResult, Relationship
from zengram.documents.domain.relevance import calibration_for
from zengram.documents.ports import ChunkFilters, ChunkIndex, ChunkStore, GraphStore, IndexJobStore
from zengram.documents.services.graph_entities import GraphEntities
from zengram.kernel.errors import FeatureUnavailable, NotFound
from zengram.kernel.ports import Embedder

if TYPE_CHECKING:
    from zengram.documents.ports import Vectors

LEG_FETCH_MIN = 20
LEG_FETCH_MAX = 100
GRAPH_CANDIDATES_MAX = 500


class IndexNotReady(FeatureUnavailable):
    """No index has been completed yet (503)."""


@dataclass(frozen=True)
class IndexStatus:
    counts: IndexCounts
    indexing_in_progress: bool
    current_job_id: str | None
    progress_percent: float
    last_indexed_at: datetime | None
    indexed_folders: list[IndexedFolder]
    graph_enabled: bool
    graph_store_type: str
    pending_jobs: int


@dataclass(frozen=True)
class Configuration:
    record_store: str  # where files, chunks, jobs and the graph live: sqlite or dynamodb
    embedding_model: str
    graph_enabled: bool


class DocumentQueries:
    entities: GraphEntities  # the code graph's entities one by one (/graph/entity)

    def __init__(self, chunks: ChunkStore, graph: GraphStore, jobs: IndexJobStore, index: ChunkIndex,
                 embedder: Embedder, *, graph_enabled: bool = True, graph_store_type: str = "sqlite") -> None:
        self._chunks = chunks
        self._graph = graph
        self._jobs = jobs
        self._index = index
        self._embedder = embedder
        self._graph_enabled = graph_enabled
        self._graph_store_type = graph_store_type
        self.entities = GraphEntities(graph, enabled=graph_enabled)

    # -- status -----------------------------------------------------------------------------------------

    def is_ready(self) -> bool:
        """An index is ready once a job completed since the last reset (it may hold no chunks)."""
        return self._jobs.ready_since() is not None

    def search_index_reachable(self) -> bool:
        """Whether the vector/keyword index answers (the records may be fine while it is down)."""
        try:
            self._index.count()
        except Exception:
            return False
        return True

    def status(self) -> IndexStatus:
        counts = self._chunks.counts()
        entities, relations = self._graph.counts() if self._graph_enabled else (0, 0)
        active = self._jobs.active()
        running = next((job for job in active if job.status is IndexJobStatus.RUNNING), None)
        current = running or (active[0] if active else None)
        folders = sorted(self._chunks.folders(), key=lambda folder: folder.folder_path)
        last = max((folder.last_indexed for folder in folders), default=None)
        return IndexStatus(
            counts=counts.model_copy(update={"entities": entities, "relationships": relations}),
            indexing_in_progress=bool(active), current_job_id=current.id if current else None,
            progress_percent=running.progress.percent_complete if running else 0.0, last_indexed_at=last,
            indexed_folders=folders, graph_enabled=self._graph_enabled, graph_store_type=self._graph_store_type,
            pending_jobs=sum(job.status is IndexJobStatus.PENDING for job in active),
        )

    def chunk(self, chunk_id: str) -> tuple[Chunk, str]:
        """One chunk by id and the indexed folder its file came from (404 when there is no such chunk)."""
        chunk = self._chunks.get_chunks([chunk_id]).get(chunk_id)
        if chunk is None:
            raise NotFound(f"chunk_id: {chunk_id} not found")
        record = self._chunks.get_file(chunk.source)
        return chunk, record.folder if record else chunk.source.rsplit("/", 1)[0]

    # -- queries ----------------------------------------------------------------------------------------

    def configuration(self) -> Configuration:
        return Configuration(self._graph_store_type, self._embedder.model_id, self._graph_enabled)

    def embedder_status(self) -> tuple[str, int, str | None]:
        """The embedder's model id and dimension, and why it does not answer a probe (None: it does)."""
        try:
            self._embedder.embed(["health check"])
        except Exception as error:  # a remote model that does not answer: say so rather than fail
            return self._embedder.model_id, self._embedder.dimension, f"{type(error).__name__}: {error}"
        return self._embedder.model_id, self._embedder.dimension, None

    def query(self, request: DocumentQuery) -> QueryResponse:
        started = time.perf_counter()
        if not self.is_ready():
            indexing = bool(self._jobs.active())
            raise IndexNotReady("Index not ready. Indexing is in progress." if indexing
                                else "Index not ready. Please index documents first.")
        filters = ChunkFilters(
            source_types=tuple(request.source_types) if request.source_types else None,
            languages=tuple(request.languages) if request.languages else None,
            file_paths=tuple(request.file_paths) if request.file_paths else None,
        )
        fused = self._rank(request, filters)
        chunks = self._chunks.get_chunks([hit.chunk_id for hit in fused])
        present = [hit for hit in fused if hit.chunk_id in chunks]
        relations = self._relationships([chunks[hit.chunk_id] for hit in present]) \
            if request.include_relationships else {}
        results = [_result(chunks[hit.chunk_id], hit, request, relations) for hit in present]
        elapsed = round((time.perf_counter() - started) * 1000, 2)
        return QueryResponse(results=results, query_time_ms=elapsed, total_results=len(results))

    def _rank(self, request: DocumentQuery, filters: ChunkFilters) -> list[Fused]:
        """Each mode's legs propose candidates; every candidate gets the same relevance score (fusion.py), and the
        threshold applies to it. The vector leg always runs, wide, for the candidates' cosines; a candidate it did
        not return is embedded (its text, from the embedding cache when it has it). Graph mode falls back to the
        vector leg when the question names no indexed code entity (as Agent Brain's server does)."""
        mode, top_k = request.mode, request.top_k
        fetch = min(LEG_FETCH_MAX, max(LEG_FETCH_MIN, 2 * top_k))
        query_vector = self._embedder.embed([request.query])[0]
        cosines = {hit.id: hit.score for hit in self._index.vector_search(query_vector, filters, LEG_FETCH_MAX)}
        vector = [LegHit(chunk_id, score) for chunk_id, score in cosines.items()][:fetch]
        bm25 = self._bm25(request, filters, fetch) if mode in (QueryMode.BM25, QueryMode.HYBRID, QueryMode.MULTI) \
            else []
        graph = self._graph_hits(request, filters)[:fetch] if mode.uses_graph else []
        legs = {QueryMode.VECTOR: (vector,), QueryMode.BM25: (bm25,), QueryMode.HYBRID: (vector, bm25),
                QueryMode.GRAPH: (graph or vector,), QueryMode.MULTI: (vector, bm25, graph)}[mode]
        chunk_ids = fusion.candidates(*legs)
        walked = mode is QueryMode.GRAPH and bool(graph)  # the walk's own scores rank graph mode
        if not walked:
            cosines.update(self._cosines(query_vector, [chunk_id for chunk_id in chunk_ids if chunk_id not in cosines]))
        lexical = {QueryMode.BM25: 1.0, QueryMode.HYBRID: 1 - request.alpha,
                   QueryMode.MULTI: 1 - request.alpha}.get(mode, 0.0)
        calibrate = calibration_for(self._embedder.model_id)
        semantic = None if walked else (lambda chunk_id: calibrate(cosines.get(chunk_id, 0.0)))
        fused = fusion.fuse(chunk_ids, semantic, bm25, graph, lexical)
        return fusion.above_threshold(fusion.ranked(fused, top_k), request.similarity_threshold)

    def _cosines(self, query_vector: Vectors, chunk_ids: list[str]) -> dict[str, float]:
        if not chunk_ids:
            return {}
        chunks = self._chunks.get_chunks(chunk_ids)
        present = [chunks[chunk_id] for chunk_id in chunk_ids if chunk_id in chunks]
        vectors = self._embedder.embed([chunk.embedding_text() for chunk in present])
        return {chunk.id: float(vectors[row] @ query_vector) for row, chunk in enumerate(present)}

    def _bm25(self, request: DocumentQuery, filters: ChunkFilters, k: int) -> list[LegHit]:
        return [LegHit(hit.id, hit.score) for hit in self._index.keyword_search(request.query, filters, k)]

    def _graph_hits(self, request: DocumentQuery, filters: ChunkFilters) -> list[LegHit]:
        if not self._graph_enabled:
            return []
        seeds: list[CodeEntity] = []
        for names in candidate_names(request.query):
            seeds = self._graph.named(names, SEEDS_MAX)
            if seeds:
                break
        if not seeds:
            return []
        reader = GraphReader(named=self._graph.named, entities=self._graph.entities,
                             relations_to=self._graph.relations_to, relations_from=self._graph.relations_from)
        hits = walk(seeds, request.traversal_depth, query_intent(request.query), reader)[:GRAPH_CANDIDATES_MAX]
        if not filters.is_empty():
            chunks = self._chunks.get_chunks([hit.chunk_id for hit in hits])
            hits = [hit for hit in hits if hit.chunk_id in chunks and _passes(chunks[hit.chunk_id], filters)]
        return [LegHit(hit.chunk_id, hit.score) for hit in hits]

    def _relationships(self, chunks: list[Chunk]) -> dict[str, list[Relationship]]:
        found = self._graph.relations_in([(chunk.source, chunk.id) for chunk in chunks])
        return {chunk_id: [Relationship(type=relation.type.value, target=relation.target,
                                        source_entity=relation.source_name) for relation in relations]
                for chunk_id, relations in found.items()}


def _passes(chunk: Chunk, filters: ChunkFilters) -> bool:
    metadata = chunk.metadata
    if filters.source_types and metadata.source_type not in filters.source_types:
        return False
    if filters.languages and metadata.language not in filters.languages:
        return False
    return not (filters.file_paths and not matches_any(chunk.source, list(filters.file_paths)))


def _result(chunk: Chunk, hit: Fused, request: DocumentQuery,
            relations: dict[str, list[Relationship]]) -> QueryResult:
    metadata = chunk.metadata.public()
    metadata.update({"source": chunk.source, "chunk_index": chunk.index})
    return QueryResult(
        text=chunk.text, source=chunk.source, score=hit.score, vector_score=hit.vector, bm25_score=hit.bm25,
        graph_score=hit.graph if request.mode.uses_graph else None, chunk_id=chunk.id,
        source_type=chunk.metadata.source_type.value, language=chunk.metadata.language, metadata=metadata,
        relationships=relations.get(chunk.id, []) if request.include_relationships else None,
    )
