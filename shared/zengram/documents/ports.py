"""The document knowledge base's ports: one protocol per concern, each with the contract every adapter keeps.

Contract suites: tests/documents/test_service.py runs the whole service on each record backend (chunks, files,
folders, jobs, graph on SQLite and DynamoDB; tests/documents/backends.py), and
tests/documents/test_chunk_index_contract.py the `ChunkIndex` contract on the embedded index and a real OpenSearch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from zengram.documents.domain.models import (
    Chunk,
    CodeEntity,
    CodeGraph,
    CodeStructure,
    FileRecord,
    IndexCounts,
    IndexedFolder,
    IndexJob,
    Relation,
    SourceType,
)
from zengram.kernel.errors import InvalidInput

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]


@runtime_checkable
class ChunkStore(Protocol):
    """The source of truth for indexed files, their chunks and indexed folders (the files themselves being the
    truth behind it: everything here is rebuilt by indexing again).

    Contract:
    - `put_chunks` upserts by chunk id; `get_chunks` returns the ones that exist (missing ids are left out).
    - `put_file` upserts the record of one file; `files_under(folder, recursive)` lists the records whose
      source lies in `folder` (directly, or at any depth when `recursive`), sorted by source.
    - `delete_file` removes the record only (the caller removes its chunks first).
    - `counts()` reports documents (file records with a content hash) and chunks.
    - `clear()` removes files, chunks and folders (jobs stay, for their history).
    """

    def put_chunks(self, chunks: Sequence[Chunk]) -> None: ...

    def delete_chunks(self, chunk_ids: Sequence[str]) -> None: ...

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]: ...

    def get_file(self, source: str) -> FileRecord | None: ...

    def put_file(self, record: FileRecord) -> None: ...

    def delete_file(self, source: str) -> None: ...

    def files_under(self, folder: str, *, recursive: bool) -> Iterator[FileRecord]: ...

    def put_folder(self, folder: IndexedFolder) -> None: ...

    def delete_folder(self, folder_path: str) -> None: ...

    def folders(self) -> list[IndexedFolder]: ...

    def counts(self) -> IndexCounts: ...

    def clear(self) -> None: ...


@runtime_checkable
class GraphStore(Protocol):
    """The code graph, kept per file: re-indexing a file replaces exactly what that file contributed.

    Contract:
    - `replace_file(source, graph)` drops the file's previous entities and relations and stores these.
    - `named(keys, limit)`: entities whose lower-cased simple name or qualified name is one of `keys`.
    - `relations_to(keys, limit)`: relations whose target's simple lower-cased name is one of `keys`.
    - `relations_from(entity_ids, limit)`: relations whose source entity is one of these.
      Each returns at most `limit` (any of them when there are more: a walk is bounded, not exhaustive).
    - `relations_in(chunks)`: for (source, chunk id) pairs, the relations written inside each chunk.
    - `counts()` gives (entities, relations); `clear()` drops everything.
    """

    def replace_file(self, source: str, graph: CodeGraph) -> None: ...

    def named(self, keys: Sequence[str], limit: int) -> list[CodeEntity]: ...

    def entities(self, entity_ids: Sequence[str]) -> dict[str, CodeEntity]: ...

    def relations_to(self, keys: Sequence[str], limit: int) -> list[Relation]: ...

    def relations_from(self, entity_ids: Sequence[str], limit: int) -> list[Relation]: ...

    def relations_in(self, chunks: Sequence[tuple[str, str]]) -> dict[str, list[Relation]]: ...

    def counts(self) -> tuple[int, int]: ...

    def clear(self) -> None: ...


@runtime_checkable
class IndexJobStore(Protocol):
    """Indexing jobs and the readiness marker.

    Contract:
    - `put` upserts a job by id; `update_progress(job)` writes its progress and cursor only, never undoing a
      status someone else set (e.g. a cancel request stays); `get` reads it strongly consistent.
    - `list_jobs(limit, offset)` newest first (job ids sort by enqueue time).
    - `active()` lists the pending and running jobs, oldest first.
    - `acquire_slot(job_id)` is atomic: true when no other job holds the one running slot (or this one already
      does); `release_slot(job_id)` frees it if this job holds it. One job runs at a time, so two runs never
      judge each other's files stale.
    - `mark_ready(at)` / `ready_since()` / `clear_ready()`: whether an index was ever completed since the last
      reset (queries answer 503 until then).
    """

    def put(self, job: IndexJob) -> None: ...

    def update_progress(self, job: IndexJob) -> IndexJob: ...

    def get(self, job_id: str) -> IndexJob | None: ...

    def list_jobs(self, limit: int, offset: int) -> list[IndexJob]: ...

    def active(self) -> list[IndexJob]: ...

    def acquire_slot(self, job_id: str) -> bool: ...

    def release_slot(self, job_id: str) -> None: ...

    def slot_holder(self) -> str | None: ...

    def mark_ready(self, at: datetime) -> None: ...

    def ready_since(self) -> datetime | None: ...

    def clear_ready(self) -> None: ...


@dataclass(frozen=True)
class ChunkFilters:
    source_types: tuple[SourceType, ...] | None = None
    languages: tuple[str, ...] | None = None
    file_paths: tuple[str, ...] | None = None

    def is_empty(self) -> bool:
        return not (self.source_types or self.languages or self.file_paths)


@dataclass(frozen=True)
class IndexedChunk:
    """What the chunk index holds for one chunk: keyword text, vector and the filter fields."""

    id: str
    text: str
    vector: Vectors
    source: str
    source_type: SourceType
    language: str | None = None


@dataclass(frozen=True)
class ChunkHit:
    id: str
    score: float


@runtime_checkable
class ChunkIndex(Protocol):
    """Vectors and BM25 over chunks, separate from the memories' index. Derived: rebuilt by re-indexing.

    Contract:
    - `bind_model(model_id, dimension)` before the first upsert; `model_id` reads it back (None when empty).
    - `upsert` replaces a chunk by id (text, vector and fields); `delete` ignores unknown ids.
    - `vector_search` returns at most k hits, best cosine first; `keyword_search` best BM25 first (scores > 0);
      both apply `filters` inside the index (`file_paths` are globs as in `files.matches`).
    - `clear()` empties it and forgets the model.
    """

    @property
    def model_id(self) -> str | None: ...

    def bind_model(self, model_id: str, dimension: int) -> None: ...

    def upsert(self, chunks: Sequence[IndexedChunk]) -> None: ...

    def delete(self, chunk_ids: Sequence[str]) -> None: ...

    def vector_search(self, vector: Vectors, filters: ChunkFilters, k: int) -> list[ChunkHit]: ...

    def keyword_search(self, text: str, filters: ChunkFilters, k: int) -> list[ChunkHit]: ...

    def count(self) -> int: ...

    def clear(self) -> None: ...

    def close(self) -> None:
        """Releases what the index holds (its file, its client); nothing is called on it afterwards."""
        ...


@dataclass(frozen=True)
class SourceFile:
    """A file a folder holds: `path` is its source id (absolute path or s3:// URI), `relative` its path inside
    the indexed folder."""

    path: str
    relative: str
    size: int


@dataclass(frozen=True)
class Listing:
    files: list[SourceFile]
    skipped: int = 0
    more: bool = False
    notes: list[str] = field(default_factory=list)


class UnresolvablePath(InvalidInput):
    """A `folder_path` no file system can resolve (a NUL byte, a symlink loop): refused, never looked up."""

    def __init__(self, folder_path: str, reason: str) -> None:
        super().__init__("folder_path", f"{folder_path!r} cannot be resolved: {reason}")


@runtime_checkable
class DocumentSource(Protocol):
    """Where folders are read from: the local file system, or S3.

    Contract:
    - `handles(folder_path)` says whether this source reads such paths (`s3://…` or a local path).
    - `resolve(folder_path)` returns the canonical folder (absolute, symlinks followed; or normalised s3 URI),
      raising Forbidden when it lies outside the allowed roots (no `..`, no symlink escapes) and InvalidInput
      when it is not a readable folder (UnresolvablePath when no file system could resolve it).
    - `list_files(folder, recursive, after, limit)` lists files in source order after `after` (exclusive),
      at most `limit` of them; files whose real location escapes the roots are skipped and counted.
    - `count_files(folder, recursive)` counts what a full listing would give.
    - `read(path)` returns a file's bytes.
    """

    def handles(self, folder_path: str) -> bool: ...

    def resolve(self, folder_path: str) -> str: ...

    def list_files(self, folder: str, *, recursive: bool, after: str | None, limit: int | None) -> Listing: ...

    def count_files(self, folder: str, *, recursive: bool) -> int: ...

    def read(self, path: str) -> bytes: ...


@runtime_checkable
class CodeParser(Protocol):
    """Parses source code (tree-sitter grammars).

    Contract: `languages` lists what `parse` accepts; `parse(text, language)` returns the definitions (outermost
    first, nested ones after their parent) and references (calls, imports, inheritance); a syntax error yields
    what could be parsed, never an exception.
    """

    @property
    def languages(self) -> frozenset[str]: ...

    def parse(self, text: str, language: str) -> CodeStructure: ...


@runtime_checkable
class PdfTextExtractor(Protocol):
    """`pages(content)` is the text of each page, in order; raises ValueError for a file that is not a PDF."""

    def pages(self, content: bytes) -> list[str]: ...


@runtime_checkable
class IndexJobLauncher(Protocol):
    """Starts a job's run somewhere else and returns at once: `run_here(job_id)` on a worker thread (embedded), or
    a Step Functions execution that runs it in batches (AWS; `run_here` unused). `close()` stops accepting work."""

    def launch(self, job_id: str, run_here: Callable[[str], object]) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class EmbeddingCacheStore(Protocol):
    """Vectors by key (`<model id>:<sha256 of the text>`), kept beside the documents' records.

    Contract: `get(keys)` returns the vectors it holds (missing keys left out); `put` upserts; `stats()` gives
    (entries, bytes); `clear()` drops every entry and returns how many there were.
    """

    def get(self, keys: Sequence[str]) -> dict[str, Vectors]: ...

    def put(self, vectors: dict[str, Vectors]) -> None: ...

    def stats(self) -> tuple[int, int]: ...

    def clear(self) -> int: ...
