"""The document knowledge base's settings (Agent Brain-style API under /kb; docs/documents.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, field_validator
from pydantic_settings import NoDecode

from zengram.kernel.settings import DynamoDBSettings, HostSettings, OpenSearchSettings


class DocumentsSettings(DynamoDBSettings, OpenSearchSettings, HostSettings):
    """Everything the documents context's wiring reads."""

    # -- the document knowledge base (Agent Brain-style API under /kb; docs/documents.md) --------------------
    documents_allowed_roots: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Folders POST /kb/index may read (local paths, or s3://bucket/prefix on AWS), comma-separated. "
                    "Empty: the folder the embedded server starts in; nothing on AWS.",
    )
    documents_dynamodb_table: str = Field(
        default="zengram-documents", description="DynamoDB table of files, chunks, jobs and the code graph (AWS).")
    documents_opensearch_alias: str = Field(
        default="zengram-documents", description="OpenSearch alias of the chunk index (its own, beside memories').")
    documents_state_machine_arn: str | None = Field(
        default=None, description="Run indexing jobs as this Step Functions state machine (AWS); unset: a worker "
                                  "thread of this process.")
    documents_batch_files: int = Field(
        default=200, ge=1, le=10_000,
        description="Most files one indexing batch takes (on AWS, one Lambda invocation of the documents state "
                    "machine; embedded, progress is saved after each).")
    documents_max_file_mb: float = Field(default=10.0, gt=0, description="Larger files are skipped when indexing.")
    documents_graph_enabled: bool = Field(
        default=True, description="Build the code graph (entities and relations) and answer graph/multi queries.")
    documents_watch_enabled: bool = Field(
        default=True, description="Embedded host: watch the folders indexed with watch_mode auto and re-index them "
                                  "when their files change (AWS: S3 event notifications, docs/documents.md).")
    documents_watch_debounce_seconds: float = Field(
        default=30.0, gt=0, le=3600,
        description="Quiet seconds after a change before a watched folder is re-indexed, unless the folder was "
                    "given its own (watch_debounce_seconds, agent-brain --debounce).")

    @field_validator("documents_allowed_roots", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @property
    def documents_path(self) -> Path:
        return self.data_dir / "documents.sqlite3"

    @property
    def documents_index_path(self) -> Path:
        return self.data_dir / "documents-index.sqlite3"
