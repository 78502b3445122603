"""GET /export and POST /export/import bodies."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from zengram.memory.api.schemas.records import MemoryRecord
from zengram.memory.domain.models import ImportStatus
from zengram.web.schemas import documented_error, left_out


class ExportFilters(BaseModel):
    client_id: str | None
    type: str | None
    since: str | None
    active_only: bool


class ExportBody(BaseModel):
    """GET /export: a page of whole records, newest first."""

    memories: list[MemoryRecord]
    total: int  # records in this page
    limit: int
    offset: int
    has_more: bool
    exported_at: str
    filters: ExportFilters
    count: int  # = total (our earlier name)


class ImportResultItem(BaseModel):
    index: int
    status: ImportStatus
    id: str | None = left_out()
    reason: str | None = left_out()
    error: str | None = left_out()


class ImportBody(BaseModel):
    imported: int
    skipped: int
    errors: int  # records that failed (upstream's name)
    failed: int  # = errors (our earlier name)
    indexed: bool
    results: list[ImportResultItem]


FORBIDDEN: dict[int | str, dict[str, Any]] = {
    403: documented_error("Import without operator_approved=true, or of a record of a client "
                                             "the API key may not access")
}
