"""Request and response bodies of the document knowledge base API (agent-brain-api.md, and the fields the
agent-brain-cli 10.x client reads)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from zengram.documents.domain.models import IndexJob, IndexOperation, IndexOptions, WatchMode
from zengram.kernel.timestamps import format_timestamp


def timestamp(moment: datetime | None) -> str | None:
    return format_timestamp(moment) if moment is not None else None


class IndexRequest(BaseModel):
    """Agent Brain's request. `include_code` defaults to true here (the spec's request has no such field and
    indexes code); the Agent Brain CLI always sends it (false unless --include-code)."""

    model_config = ConfigDict(extra="ignore")

    folder_path: str = Field(min_length=1, max_length=4096, description="Folder to index (absolute, relative to "
                                                                         "the first allowed root, or s3://...)")
    chunk_size: int = Field(default=512, ge=32, le=8192, description="Target tokens per chunk")
    chunk_overlap: int = Field(default=50, ge=0, le=2048, description="Tokens repeated between chunks")
    recursive: bool = Field(default=True, description="Include subfolders")
    include_code: bool = Field(default=True, description="Index source code (Python, JS/TS, Go, Java, Rust)")
    supported_languages: list[str] | None = Field(default=None, description="Only code in these languages")
    include_patterns: list[str] | None = Field(default=None, description="Only files matching these globs")
    exclude_patterns: list[str] | None = Field(default=None, description="Skip files matching these globs")
    include_types: list[str] | None = Field(default=None, description="File type presets (python, docs, pdf…)")
    force: bool = Field(default=False, description="Re-chunk and re-embed unchanged files too")
    watch_mode: WatchMode | None = Field(
        default=None, description="auto: re-index the folder when its files change (embedded host: a file watcher; "
                                  "AWS: S3 event notifications); off: stop; unset: keep the folder's mode")
    watch_debounce_seconds: int | None = Field(default=None, ge=1, le=3600,
                                               description="Quiet seconds after a change before re-indexing")
    injector_script: str | None = Field(default=None, description="Agent Brain's content injection (agent-brain "
                                                                  "inject): refused, this server runs no scripts")
    folder_metadata_file: str | None = Field(default=None, description="Agent Brain's static chunk metadata: refused")

    @field_validator("injector_script")
    @classmethod
    def _no_scripts(cls, value: str | None) -> str | None:
        if value is not None:
            raise ValueError("this server does not run injector scripts (code it would import from a path of its "
                             "disk); index the folder as it is (agent-brain index) and enrich the files beforehand")
        return value

    @field_validator("folder_metadata_file")
    @classmethod
    def _no_static_metadata(cls, value: str | None) -> str | None:
        if value is not None:
            raise ValueError("this server keeps no caller-supplied chunk metadata; its chunks carry the metadata "
                             "indexing derives (section, symbol, language, lines, page); use agent-brain index")
        return value

    def options(self, force: bool = False) -> IndexOptions:
        def as_tuple(values: list[str] | None) -> tuple[str, ...] | None:
            return tuple(values) if values else None

        return IndexOptions(chunk_size=self.chunk_size, chunk_overlap=self.chunk_overlap, recursive=self.recursive,
                            include_code=self.include_code, languages=as_tuple(self.supported_languages),
                            include_patterns=as_tuple(self.include_patterns),
                            exclude_patterns=as_tuple(self.exclude_patterns),
                            include_types=as_tuple(self.include_types), force=self.force or force,
                            watch_mode=self.watch_mode, watch_debounce_seconds=self.watch_debounce_seconds)


class IndexResponse(BaseModel):
    job_id: str
    status: str
    message: str | None = None
    queue_position: int | None = None
    queue_length: int | None = None
    dedupe_hit: bool | None = None


class HealthResponse(BaseModel):
    status: Literal["healthy", "indexing", "degraded", "unhealthy"]
    message: str
    version: str
    timestamp: str


class GraphIndexStatus(BaseModel):
    enabled: bool
    entity_count: int
    relationship_count: int
    store_type: str


class IndexingStatusResponse(BaseModel):
    total_documents: int
    total_chunks: int
    indexing_in_progress: bool
    current_job_id: str | None
    progress_percent: float
    last_indexed_at: str | None
    indexed_folders: list[str]
    graph_index: GraphIndexStatus
    file_watcher: dict[str, bool | int] = Field(default_factory=lambda: {"running": False, "watched_folders": 0})


class CountResponse(BaseModel):
    total_chunks: int
    ready: bool


class JobProgressBody(BaseModel):
    files_processed: int
    files_total: int
    files_skipped: int
    chunks_created: int
    current_file: str
    percent_complete: float


class JobSummary(BaseModel):
    id: str
    job_id: str
    status: str
    folder_path: str
    operation: IndexOperation
    include_code: bool
    source: str = "manual"
    enqueued_at: str
    started_at: str | None
    finished_at: str | None
    progress_percent: float
    error: str | None

    @classmethod
    def of(cls, job: IndexJob) -> JobSummary:
        return cls(id=job.id, job_id=job.id, status=job.status.value, folder_path=job.folder_path,
                   operation=job.operation, include_code=job.options.include_code, source=job.trigger,
                   enqueued_at=timestamp(
                       job.enqueued_at) or "", started_at=timestamp(job.started_at),
                   finished_at=timestamp(job.finished_at), progress_percent=job.progress.percent_complete,
                   error=job.error)


class JobDetail(JobSummary):
    execution_time_ms: int | None
    progress: JobProgressBody
    total_documents: int
    total_chunks: int
    retry_count: int = 0
    cancel_requested: bool

    @classmethod
    def of(cls, job: IndexJob) -> JobDetail:
        progress = job.progress
        return cls(**JobSummary.of(job).model_dump(), execution_time_ms=job.execution_time_ms,
                   progress=JobProgressBody(files_processed=progress.files_processed, files_total=progress.files_total,
                                            files_skipped=progress.files_skipped,
                                            chunks_created=progress.chunks_created,
                                            current_file=progress.current_file,
                                            percent_complete=progress.percent_complete),
                   total_documents=job.total_documents, total_chunks=job.total_chunks,
                   cancel_requested=job.cancel_requested)


class JobListResponse(BaseModel):
    jobs: list[JobSummary]
    total: int
    pending: int
    running: int
    completed: int
    failed: int


class CancelResponse(BaseModel):
    job_id: str
    status: str
    message: str


class FolderInfo(BaseModel):
    folder_path: str
    chunk_count: int
    file_count: int
    last_indexed: str
    watch_mode: WatchMode = "off"
    watch_debounce_seconds: int | None = None


class FolderListResponse(BaseModel):
    folders: list[FolderInfo]
    total: int


class FolderDeleteRequest(BaseModel):
    folder_path: str = Field(min_length=1, max_length=4096)


class FolderDeleteResponse(BaseModel):
    folder_path: str
    chunks_deleted: int
    message: str


class ProjectedEntity(BaseModel):
    type: str = Field(min_length=1, max_length=96)
    id: str = Field(min_length=1, max_length=256)
    properties: dict[str, object] = Field(default_factory=dict)


class ProjectedRelation(BaseModel):
    src: str = Field(min_length=1, max_length=256)
    predicate: str = Field(min_length=1, max_length=64)
    dst: str = Field(min_length=1, max_length=256)


class GraphProjectRequest(BaseModel):
    """Agent Brain's body of POST /graph/project (validated, then refused: this server keeps no projected facts)."""

    entities: list[ProjectedEntity] = Field(default_factory=list, max_length=10_000)
    relations: list[ProjectedRelation] = Field(default_factory=list, max_length=10_000)
    source_tag: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z][A-Za-z0-9._:-]{0,63}$")
    replace: bool = False
