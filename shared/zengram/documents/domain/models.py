"""What the document knowledge base keeps: files, their chunks, indexed folders, indexing jobs, the code graph."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from zengram.kernel.errors import Conflict
from zengram.kernel.timestamps import format_timestamp

WatchMode = Literal["off", "auto"]


class SourceType(StrEnum):
    DOC = "doc"
    CODE = "code"
    TEST = "test"


def chunk_id_for(source: str, index: int) -> str:
    """Stable: the same file path and position always give the same id, so re-indexing upserts."""
    digest = hashlib.sha256(f"{source}\x00{index}".encode()).hexdigest()[:20]
    return f"chunk_{digest}"


def content_hash(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


class ChunkMetadata(BaseModel):
    """Where a chunk comes from. Fields that do not apply (a page for Markdown) stay None."""

    model_config = ConfigDict(frozen=True)

    source_type: SourceType = SourceType.DOC
    language: str | None = None
    section: str | None = None
    symbol: str | None = None
    kind: str | None = None
    page: int | None = None
    start_line: int | None = None
    end_line: int | None = None
    file_name: str | None = None

    def public(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


class Chunk(BaseModel):
    """One piece of one file: what the indexes search and a query returns."""

    model_config = ConfigDict(frozen=True)

    id: str
    source: str
    index: int
    text: str
    metadata: ChunkMetadata

    def keyword_text(self) -> str:
        """What BM25 sees: the text plus its symbol and file name split into words (`parse_config` and
        `parseConfig` both match "parse config")."""
        extras = " ".join(part for part in (self.metadata.symbol, self.metadata.section, self.metadata.file_name)
                          if part)
        return f"{self.text}\n{split_identifiers(extras)}" if extras else self.text

    def embedding_text(self) -> str:
        """What the vector sees: a short heading (file, section or symbol) before the text."""
        heading = " · ".join(part for part in (self.metadata.file_name, self.metadata.section, self.metadata.symbol)
                             if part)
        return f"{heading}\n{self.text}" if heading else self.text


def split_identifiers(text: str) -> str:
    """`parse_config getHTTPServer` → `parse config get HTTP Server`: identifiers as words for BM25."""
    spaced = []
    for token in text.replace("_", " ").replace(".", " ").split():
        word = ""
        for previous, char, following in zip(" " + token[:-1], token, token[1:] + " ", strict=True):
            boundary = char.isupper() and (previous.islower() or (previous.isupper() and following.islower()))
            word += (" " if boundary and word else "") + char
        spaced.append(word)
    return " ".join(spaced)


class FileRecord(BaseModel):
    """One indexed file. `content_hash` None means its last indexing did not finish: the next run redoes it.
    `high_water` is the most chunk positions it may hold, so stale chunks are found after a crash too."""

    model_config = ConfigDict(frozen=True)

    source: str
    folder: str
    content_hash: str | None
    chunk_count: int
    high_water: int
    source_type: SourceType
    language: str | None = None
    size: int = 0
    seen_job: str | None = None
    indexed_at: datetime
    options_key: str = ""

    def chunk_ids(self) -> list[str]:
        return [chunk_id_for(self.source, index) for index in range(max(self.chunk_count, self.high_water))]


class IndexedFolder(BaseModel):
    model_config = ConfigDict(frozen=True)

    folder_path: str
    chunk_count: int
    file_count: int
    last_indexed: datetime
    recursive: bool = True
    include_code: bool = True
    watch_mode: WatchMode = "off"  # "auto": a change under the folder queues a re-index (docs/documents.md)
    watch_debounce_seconds: int | None = None  # None: the host's default
    options: IndexOptions | None = None  # what the last job asked for: a watched folder is re-indexed with it

    @field_serializer("last_indexed", when_used="json")
    def _timestamp_text(self, moment: datetime) -> str:
        return format_timestamp(moment)


class IndexCounts(BaseModel):
    model_config = ConfigDict(frozen=True)

    documents: int = 0
    chunks: int = 0
    entities: int = 0
    relationships: int = 0


# -- jobs ----------------------------------------------------------------------------------------------

class IndexJobStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        return self in (IndexJobStatus.DONE, IndexJobStatus.FAILED, IndexJobStatus.CANCELLED)


class IndexOperation(StrEnum):
    INDEX = "index"  # upsert the folder's files and drop those gone from it
    ADD = "add"  # upsert only: nothing already indexed is removed


class IndexOptions(BaseModel):
    """What an indexing request asked for, kept on its job so any worker (thread or Lambda) can run it."""

    model_config = ConfigDict(frozen=True)

    chunk_size: int = 512
    chunk_overlap: int = 50
    recursive: bool = True
    include_code: bool = True
    languages: tuple[str, ...] | None = None
    include_patterns: tuple[str, ...] | None = None
    exclude_patterns: tuple[str, ...] | None = None
    include_types: tuple[str, ...] | None = None
    force: bool = False
    watch_mode: WatchMode | None = None  # None: the folder keeps the watch mode it had
    watch_debounce_seconds: int | None = Field(default=None, ge=1, le=3600)

    def chunking_key(self) -> str:
        """Files indexed with other chunk settings are re-chunked even when their content is unchanged."""
        return f"{self.chunk_size}/{self.chunk_overlap}"


class JobProgress(BaseModel):
    model_config = ConfigDict(frozen=True)

    files_processed: int = 0
    files_total: int = 0
    files_skipped: int = 0
    chunks_created: int = 0
    current_file: str = ""

    @property
    def percent_complete(self) -> float:
        if self.files_total == 0:
            return 0.0
        return round(min(100.0, 100.0 * self.files_processed / self.files_total), 1)


class IndexJob(BaseModel):
    """One indexing request and how far it got. State changes go through the methods below only."""

    model_config = ConfigDict(frozen=True)

    id: str
    folder_path: str
    operation: IndexOperation = IndexOperation.INDEX
    options: IndexOptions = Field(default_factory=IndexOptions)
    status: IndexJobStatus = IndexJobStatus.PENDING
    cancel_requested: bool = False
    enqueued_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    progress: JobProgress = Field(default_factory=JobProgress)
    cursor: str | None = None
    error: str | None = None
    total_documents: int = 0
    total_chunks: int = 0
    trigger: Literal["manual", "auto"] = "manual"  # "auto": queued by a watched folder's change

    def start(self, at: datetime, files_total: int) -> IndexJob:
        return self.model_copy(update={"status": IndexJobStatus.RUNNING, "started_at": self.started_at or at,
                                       "progress": self.progress.model_copy(update={"files_total": files_total})})

    def advanced(self, progress: JobProgress, cursor: str | None) -> IndexJob:
        return self.model_copy(update={"progress": progress, "cursor": cursor})

    def finish(self, at: datetime, *, documents: int, chunks: int) -> IndexJob:
        return self.model_copy(update={"status": IndexJobStatus.DONE, "finished_at": at, "total_documents": documents,
                                       "total_chunks": chunks,
                                       "progress": self.progress.model_copy(update={"current_file": ""})})

    def fail(self, at: datetime, error: str) -> IndexJob:
        return self.model_copy(update={"status": IndexJobStatus.FAILED, "finished_at": at, "error": error[:1000]})

    def cancel(self, at: datetime) -> IndexJob:
        """A pending job is cancelled at once; a running one is asked to stop at its next file."""
        if self.status.finished:
            raise Conflict(f"job {self.id} is already {self.status.value}")
        if self.status is IndexJobStatus.PENDING:
            return self.cancelled(at)
        return self.model_copy(update={"cancel_requested": True})

    def cancelled(self, at: datetime) -> IndexJob:
        return self.model_copy(update={"status": IndexJobStatus.CANCELLED, "finished_at": at, "cancel_requested": True})

    @property
    def execution_time_ms(self) -> int | None:
        if self.started_at is None:
            return None
        end = self.finished_at or self.started_at
        return int((end - self.started_at).total_seconds() * 1000)


# -- the code graph ------------------------------------------------------------------------------------

class EntityKind(StrEnum):
    MODULE = "module"
    CLASS = "class"
    FUNCTION = "function"
    METHOD = "method"


class RelationType(StrEnum):
    CALLS = "CALLS"
    IMPORTS = "IMPORTS"
    INHERITS = "INHERITS"
    EXTENDS = "EXTENDS"
    CONTAINS = "CONTAINS"
    DEFINED_IN = "DEFINED_IN"


class CodeEntity(BaseModel):
    """A module, class, function or method, found in one file. `id` is `<source>::<qualified name>`."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    qualified_name: str
    kind: EntityKind
    source: str
    chunk_id: str
    language: str
    line: int

    @property
    def name_key(self) -> str:
        return self.name.lower()


class Relation(BaseModel):
    """`source_entity` (an entity id) –type→ `target` (a name as written, e.g. `utils.compute_total`).
    Targets stay names: which entity a name means is decided when the graph is walked."""

    model_config = ConfigDict(frozen=True)

    type: RelationType
    source_entity: str
    source_name: str
    target: str
    source: str
    chunk_id: str

    @property
    def target_key(self) -> str:
        return target_key(self.target)


def target_key(name: str) -> str:
    """The simple, lower-cased name a written target refers to: `self.repo.save()` → `save`."""
    simple = name.strip().rstrip("()").replace("::", ".").replace("/", ".")
    return simple.rsplit(".", 1)[-1].strip().lower()


class CodeGraph(BaseModel):
    """What one file adds to the graph."""

    model_config = ConfigDict(frozen=True)

    entities: tuple[CodeEntity, ...] = ()
    relations: tuple[Relation, ...] = ()


class ParsedFile(BaseModel):
    """A file split into chunks, with the graph its code defines."""

    model_config = ConfigDict(frozen=True)

    chunks: tuple[Chunk, ...]
    graph: CodeGraph = Field(default_factory=CodeGraph)


@dataclass(frozen=True)
class Definition:
    """A class, function or method found in code: its lines (1-based, inclusive) and qualified name."""

    name: str
    qualified_name: str
    kind: str
    start_line: int
    end_line: int
    parent: str | None


@dataclass(frozen=True)
class Reference:
    """A relation found in code, by qualified names: `source_name` (the enclosing definition or the module)
    –type→ `target` (as written)."""

    type: str
    source_name: str
    target: str
    line: int


@dataclass(frozen=True)
class CodeStructure:
    definitions: list[Definition]
    references: list[Reference]
