"""Export whole records as JSON, and import them back (operator-approved)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from zengram.kernel.timestamps import format_timestamp, utc_now
from zengram.memory.api.deps import KnowledgeServiceDep
from zengram.memory.api.schemas.export import FORBIDDEN, ExportBody, ExportFilters, ImportBody, ImportResultItem
from zengram.memory.domain.models import ImportStatus
from zengram.memory.domain.requests import ExportRequest, ImportRequest, StrictQueryBool
from zengram.web.access import ScopeDep
from zengram.web.schemas import ERROR_RESPONSES

router = APIRouter(tags=["export"], responses=ERROR_RESPONSES)


@router.get("/export", response_model=ExportBody)
def export_memories(request: Annotated[ExportRequest, Query()], knowledge: KnowledgeServiceDep,
                    scope: ScopeDep) -> ExportBody:
    page = knowledge.export(request, scope)
    filters = ExportFilters(client_id=request.client_id, type=request.type.value if request.type else None,
                            since=format_timestamp(request.since) if request.since else None,
                            active_only=request.active_only)
    return ExportBody(memories=page.memories, total=len(page.memories), limit=request.limit, offset=request.offset,
                      has_more=page.has_more, exported_at=format_timestamp(utc_now()), filters=filters,
                      count=len(page.memories))


@router.post("/export/import", response_model=ImportBody, responses=FORBIDDEN)
def import_memories(
    body: ImportRequest,
    knowledge: KnowledgeServiceDep,
    scope: ScopeDep,
    operator_approved: Annotated[StrictQueryBool | None, Query()] = None,
) -> ImportBody:
    report = knowledge.import_batch(body, approved=bool(operator_approved), scope=scope)
    return ImportBody(
        imported=report.count(ImportStatus.IMPORTED), skipped=report.count(ImportStatus.SKIPPED),
        errors=report.count(ImportStatus.FAILED), failed=report.count(ImportStatus.FAILED), indexed=report.indexed,
        results=[ImportResultItem(index=item.index, status=item.status, id=item.id, reason=item.reason,
                                  error=item.error) for item in report.items],
    )
