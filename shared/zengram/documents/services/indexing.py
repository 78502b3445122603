"""Indexing folders as jobs: enqueue, run (whole, or in batches any worker can pick up), cancel, reset.

A job runs in three steps so a host can spread it over several processes: `plan` (claim the one running slot,
count the files), `run_batch` (index files after the job's cursor until told to stop), `finish` (drop files gone
from the folder, record the folder, mark the index ready). The embedded host runs all three on a worker thread;
the AWS host runs each as a Step Functions task, so no single Lambda's 15 minutes bounds a folder.

Per file, the record is written first without a content hash (and with the most chunk positions the file may hold),
then chunks and vectors, then the stale positions are removed, and the record gets its hash last: a crash anywhere
leaves a record the next run redoes, and no orphan chunk.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from zengram.documents.domain.files import (
    check_languages,
    check_types,
    is_selected,
    kind_of,
    s3_from_resolved_path,
)
from zengram.documents.domain.models import (
    Chunk,
    CodeGraph,
    FileRecord,
    IndexedFolder,
    IndexJob,
    IndexJobStatus,
    IndexOperation,
    IndexOptions,
    ParsedFile,
    chunk_id_for,
    content_hash,
)
from zengram.documents.ports import (
    ChunkIndex,
    ChunkStore,
    DocumentSource,
    GraphStore,
    IndexedChunk,
    IndexJobLauncher,
    IndexJobStore,
    SourceFile,
    UnresolvablePath,
)
from zengram.documents.services.parsing import FileParser, UnreadableFile
from zengram.kernel.errors import Conflict, InvalidInput, NotFound
from zengram.kernel.ports import Clock, Embedder

logger = logging.getLogger(__name__)
PROGRESS_EVERY_SECONDS = 1.0
EMBED_BATCH = 64


@dataclass(frozen=True)
class IndexingConfig:
    batch_files: int | None = None  # most files per run_batch call; None: no limit (a single process)
    max_file_bytes: int = 10 * 1024 * 1024
    graph_enabled: bool = True


@dataclass(frozen=True)
class DocumentRecords:
    """The knowledge base's records, kept together in one file or table: chunks and files, the code graph, the jobs."""

    chunks: ChunkStore
    graph: GraphStore
    jobs: IndexJobStore


@dataclass(frozen=True)
class Enqueued:
    job: IndexJob
    queue_position: int
    queue_length: int
    dedupe_hit: bool


@dataclass(frozen=True)
class BatchResult:
    done: bool
    job: IndexJob


class DocumentIndexing:
    def __init__(self, records: DocumentRecords, index: ChunkIndex, embedder: Embedder,
                 sources: Sequence[DocumentSource], parser: FileParser, clock: Clock, launcher: IndexJobLauncher,
                 config: IndexingConfig | None = None) -> None:
        self._chunks = records.chunks
        self._graph = records.graph
        self._jobs = records.jobs
        self._index = index
        self._embedder = embedder
        self._sources = list(sources)
        self._parser = parser
        self._clock = clock
        self._launcher = launcher
        self._config = config or IndexingConfig()

    # -- requests ---------------------------------------------------------------------------------------

    def enqueue(self, folder_path: str, operation: IndexOperation, options: IndexOptions,
                trigger: Literal["manual", "auto"] = "manual") -> Enqueued:
        """Validates the folder (403 outside the allowed roots) and options, queues a job and starts it. `trigger`
        "auto": a watched folder changed (the job lists as `source: auto`)."""
        check_languages(options.languages)
        check_types(options.include_types)
        if options.chunk_overlap >= options.chunk_size:
            raise InvalidInput("chunk_overlap", "must be smaller than chunk_size")
        folder_path = self._meant(folder_path)
        folder = self._source_for(folder_path).resolve(folder_path)
        active = self._jobs.active()
        for job in active:
            if (job.status is IndexJobStatus.PENDING and job.folder_path == folder and job.operation == operation
                    and job.options == options and not options.force):
                return Enqueued(job, active.index(job), len(active), dedupe_hit=True)
        job = IndexJob(id=new_job_id(self._clock.now()), folder_path=folder, operation=operation, options=options,
                       enqueued_at=self._clock.now(), trigger=trigger)
        self._jobs.put(job)
        self._launcher.launch(job.id, self.run)
        return Enqueued(job, len(active), len(active) + 1, dedupe_hit=False)

    def folders(self) -> list[IndexedFolder]:
        return self._chunks.folders()

    def reindex(self, folder: IndexedFolder) -> Enqueued:
        """A watched folder changed: index it again as its last job asked (unchanged files are skipped, files gone
        are dropped); an identical job still pending absorbs the request."""
        options = folder.options or IndexOptions(recursive=folder.recursive, include_code=folder.include_code)
        return self.enqueue(folder.folder_path, IndexOperation.INDEX, options, trigger="auto")

    def job(self, job_id: str) -> IndexJob:
        job = self._jobs.get(job_id)
        if job is None:
            raise NotFound(f"job {job_id} not found")
        return job

    def jobs(self, limit: int, offset: int) -> list[IndexJob]:
        return self._jobs.list_jobs(limit, offset)

    def cancel(self, job_id: str) -> IndexJob:
        job = self.job(job_id).cancel(self._clock.now())
        self._jobs.put(job)
        return job

    def reset(self) -> None:
        """Clears every chunk, file, folder and the graph; refused while a job is queued or running."""
        self._refuse_while_indexing("reset the index")
        self._index.clear()
        self._chunks.clear()
        self._graph.clear()
        self._jobs.clear_ready()

    def delete_folder(self, folder_path: str) -> int:
        """Removes an indexed folder's files and chunks; returns how many chunks went."""
        self._refuse_while_indexing("remove a folder")
        folder_path = self._meant(folder_path)
        known = {folder.folder_path: folder for folder in self._chunks.folders()}
        folder = known.get(folder_path) or known.get(folder_path.rstrip("/"))
        if folder is None:
            try:
                folder = known.get(self._source_for(folder_path).resolve(folder_path))
            except UnresolvablePath:
                raise
            except InvalidInput:  # e.g. the folder is gone from disk: it was not indexed under this name either
                folder = None
        if folder is None:
            raise NotFound(f"folder_path: {folder_path} is not an indexed folder")
        removed = 0
        for record in list(self._chunks.files_under(folder.folder_path, recursive=folder.recursive)):
            removed += record.chunk_count
            self._remove_file(record)
        self._chunks.delete_folder(folder.folder_path)
        return removed

    # -- running a job ----------------------------------------------------------------------------------

    def run(self, job_id: str) -> IndexJob:
        """The whole job in this process (the embedded worker)."""
        try:
            if not self.plan(job_id):
                return self.job(job_id)
            while not self.run_batch(job_id, keep_going=lambda: True).done:
                pass
            return self.finish(job_id)
        except Exception as error:
            logger.exception("indexing job %s failed", job_id)
            return self.fail(job_id, f"{type(error).__name__}: {error}")

    def plan(self, job_id: str) -> bool:
        """Claims the running slot and counts the files. False when the job should wait (another one runs) or
        has nothing to do (it was cancelled or already finished)."""
        job = self.job(job_id)
        if job.status.finished:
            return False
        if job.cancel_requested:
            self._finish_cancelled(job)
            return False
        if not self._jobs.acquire_slot(job_id):
            return False
        self._ensure_model()
        total = self._source_for(job.folder_path).count_files(job.folder_path, recursive=job.options.recursive)
        self._jobs.put(job.start(self._clock.now(), total))
        return True

    def is_waiting(self, job_id: str) -> bool:
        job = self.job(job_id)
        return job.status is IndexJobStatus.PENDING and not job.cancel_requested

    def run_batch(self, job_id: str, keep_going: Callable[[], bool]) -> BatchResult:
        """Indexes the files after the job's cursor until the listing ends, `batch_files` files are done, or
        `keep_going()` says stop (a Lambda running out of time). Returns whether the listing is exhausted."""
        job = self.job(job_id)
        if job.status is not IndexJobStatus.RUNNING:
            return BatchResult(True, job)
        source = self._source_for(job.folder_path)
        listing = source.list_files(job.folder_path, recursive=job.options.recursive, after=job.cursor,
                                    limit=self._config.batch_files)
        progress, cursor = job.progress, job.cursor
        last_saved = time.monotonic()
        for position, file in enumerate(listing.files):
            if position and not keep_going():
                self._jobs.update_progress(job.advanced(progress, cursor))
                return BatchResult(False, self.job(job_id))
            if self._cancel_requested(job_id):
                return BatchResult(True, self._finish_cancelled(self.job(job_id)))
            progress = progress.model_copy(update={"current_file": file.relative})
            created, skipped = self._index_file(job, source, file)
            progress = progress.model_copy(update={
                "files_processed": progress.files_processed + 1, "chunks_created": progress.chunks_created + created,
                "files_skipped": progress.files_skipped + int(skipped)})
            cursor = file.path
            if time.monotonic() - last_saved >= PROGRESS_EVERY_SECONDS:
                job = self._jobs.update_progress(job.advanced(progress, cursor))
                last_saved = time.monotonic()
        job = self._jobs.update_progress(job.advanced(progress, cursor))
        return BatchResult(not listing.more, job)

    def finish(self, job_id: str) -> IndexJob:
        """After the last batch: an `index` job drops the folder's files it did not see; the folder's totals are
        recorded and the index is marked ready."""
        job = self.job(job_id)
        if job.status is not IndexJobStatus.RUNNING:
            return job
        if job.cancel_requested:
            return self._finish_cancelled(job)
        if job.operation is IndexOperation.INDEX:
            for record in list(self._chunks.files_under(job.folder_path, recursive=job.options.recursive)):
                if record.seen_job != job.id:
                    self._remove_file(record)
        documents = chunks = 0
        for record in self._chunks.files_under(job.folder_path, recursive=job.options.recursive):
            documents += 1
            chunks += record.chunk_count
        now = self._clock.now()
        self._chunks.put_folder(self._folder_record(job, documents, chunks, now))
        finished = self.job(job_id).finish(now, documents=documents, chunks=chunks)
        self._jobs.put(finished)
        self._jobs.mark_ready(now)
        self._jobs.release_slot(job_id)
        return finished

    def _folder_record(self, job: IndexJob, documents: int, chunks: int, now: datetime) -> IndexedFolder:
        """The folder keeps its watch settings unless the job set them; it remembers the job's options (without
        `force` and watch settings) so that a watched folder is re-indexed the same way."""
        before = next((folder for folder in self._chunks.folders() if folder.folder_path == job.folder_path), None)
        options = job.options
        watch = options.watch_mode or (before.watch_mode if before else "off")
        debounce = options.watch_debounce_seconds or (before.watch_debounce_seconds if before else None)
        return IndexedFolder(folder_path=job.folder_path, chunk_count=chunks, file_count=documents, last_indexed=now,
                             recursive=options.recursive, include_code=options.include_code, watch_mode=watch,
                             watch_debounce_seconds=debounce,
                             options=options.model_copy(update={"force": False, "watch_mode": None,
                                                                "watch_debounce_seconds": None}))

    def fail(self, job_id: str, error: str) -> IndexJob:
        job = self._jobs.get(job_id)
        if job is None:
            raise NotFound(f"job {job_id} not found")
        if not job.status.finished:
            job = job.fail(self._clock.now(), error)
            self._jobs.put(job)
        self._jobs.release_slot(job_id)
        return job

    def recover(self) -> None:
        """At start-up of a single-process host: jobs a previous process left running failed with it; pending
        ones are started again."""
        for job in self._jobs.active():
            if job.status is IndexJobStatus.RUNNING:
                self.fail(job.id, "interrupted: the server stopped while this job ran")
        holder = self._jobs.slot_holder()
        if holder is not None:
            self._jobs.release_slot(holder)
        for job in self._jobs.active():
            self._launcher.launch(job.id, self.run)

    # -- one file ---------------------------------------------------------------------------------------

    def _index_file(self, job: IndexJob, source: DocumentSource, file: SourceFile) -> tuple[int, bool]:
        """Returns (chunks written, skipped). A file that is not taken is not marked seen, so an `index` job
        drops what an earlier run indexed from it."""
        kind = kind_of(file.relative)
        if kind is None or not is_selected(file.relative, kind, job.options) or file.size > self._config.max_file_bytes:
            return 0, True
        record = self._chunks.get_file(file.path)
        try:
            content = source.read(file.path)
        except OSError as error:
            logger.warning("could not read %s: %s", file.path, error)
            if record is not None:  # keep what was indexed rather than judge it gone
                self._chunks.put_file(record.model_copy(update={"seen_job": job.id}))
            return 0, True
        digest = content_hash(content)
        options_key = job.options.chunking_key()
        if (record is not None and record.content_hash == digest and record.options_key == options_key
                and not job.options.force):
            if record.seen_job != job.id:
                self._chunks.put_file(record.model_copy(update={"seen_job": job.id, "folder": job.folder_path}))
            return 0, False
        try:
            parsed = self._parser.parse(file.path, kind, content, job.options)
        except UnreadableFile as error:
            logger.info("skipping %s: %s", file.path, error)
            parsed = ParsedFile(chunks=())
        previous = max(record.chunk_count, record.high_water) if record else 0
        count = len(parsed.chunks)
        base = FileRecord(source=file.path, folder=job.folder_path, content_hash=None, chunk_count=count,
                          high_water=max(previous, count), source_type=kind.source_type,
                          language=parsed.chunks[0].metadata.language if parsed.chunks else kind.language,
                          size=file.size, seen_job=job.id, indexed_at=self._clock.now(), options_key=options_key)
        self._chunks.put_file(base)
        self._write_chunks(parsed.chunks)
        stale = [chunk_id_for(file.path, position) for position in range(count, previous)]
        self._index.delete(stale)
        self._chunks.delete_chunks(stale)
        if self._config.graph_enabled:
            self._graph.replace_file(file.path, parsed.graph)
        self._chunks.put_file(base.model_copy(update={"content_hash": digest, "high_water": count}))
        return count, False

    def _write_chunks(self, chunks: Sequence[Chunk]) -> None:
        for start in range(0, len(chunks), EMBED_BATCH):
            batch = chunks[start : start + EMBED_BATCH]
            vectors = self._embedder.embed([chunk.embedding_text() for chunk in batch])
            self._chunks.put_chunks(batch)
            self._index.upsert([
                IndexedChunk(id=chunk.id, text=chunk.keyword_text(), vector=vectors[row], source=chunk.source,
                             source_type=chunk.metadata.source_type, language=chunk.metadata.language)
                for row, chunk in enumerate(batch)
            ])

    def _remove_file(self, record: FileRecord) -> None:
        ids = record.chunk_ids()
        self._index.delete(ids)
        self._chunks.delete_chunks(ids)
        self._graph.replace_file(record.source, CodeGraph())
        self._chunks.delete_file(record.source)

    # -- helpers ----------------------------------------------------------------------------------------

    def _ensure_model(self) -> None:
        """The chunk index holds one model's vectors: bound on first use; another model's index is cleared (every
        file then counts as changed, so the running job re-embeds it)."""
        bound = self._index.model_id
        if bound == self._embedder.model_id:
            return
        if bound is not None:
            logger.warning("the document index was built with %s, not %s: clearing it to re-embed every file",
                           bound, self._embedder.model_id)
            self._index.clear()
            self._chunks.clear()
            self._graph.clear()
        self._index.bind_model(self._embedder.model_id, self._embedder.dimension)

    def _cancel_requested(self, job_id: str) -> bool:
        job = self._jobs.get(job_id)
        return job is None or job.cancel_requested

    def _finish_cancelled(self, job: IndexJob) -> IndexJob:
        cancelled = job.cancelled(self._clock.now())
        self._jobs.put(cancelled)
        self._jobs.release_slot(job.id)
        return cancelled

    def _refuse_while_indexing(self, action: str) -> None:
        if self._jobs.active():
            raise Conflict(f"cannot {action} while indexing is in progress; wait for the job or cancel it")

    def _meant(self, folder_path: str) -> str:
        """On a host that reads S3, `<cwd>/s3:/bucket/prefix` (what the Agent Brain CLI makes of an s3:// folder)
        is that S3 folder."""
        meant = s3_from_resolved_path(folder_path)
        if meant is not None and any(source.handles(meant) for source in self._sources):
            return meant
        return folder_path

    def _source_for(self, folder_path: str) -> DocumentSource:
        if not folder_path or not folder_path.strip():
            raise InvalidInput("folder_path", "must not be empty")
        if "\x00" in folder_path:
            raise UnresolvablePath(folder_path, "it holds a NUL byte")
        for source in self._sources:
            if source.handles(folder_path):
                return source
        raise InvalidInput("folder_path", "this host cannot read such a folder "
                                          f"({'s3://bucket/prefix' if self._sources else 'no source configured'})")


def new_job_id(now: datetime) -> str:
    """`job_` + milliseconds (hex, fixed width) + randomness: ids sort by enqueue time."""
    return f"job_{int(now.timestamp() * 1000):012x}{secrets.token_hex(3)}"

