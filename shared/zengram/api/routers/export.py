"""Export whole records as JSON, and import them back (operator-approved)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import ValidationError

from zengram.api.access import ScopeDep
from zengram.api.deps import KnowledgeServiceDep
from zengram.api.errors import describe_validation_errors, error_response
from zengram.api.schemas import (
    ERROR_RESPONSES,
    FORBIDDEN,
    ExportBody,
    ImportBody,
    ImportResultItem,
    full_record,
)
from zengram.domain.models import format_timestamp, utc_now
from zengram.domain.requests import ExportRequest, ImportRecord, ImportRequest, StrictQueryBool
from zengram.services.knowledge import ImportItem

router = APIRouter(tags=["export"], responses=ERROR_RESPONSES)


@router.get("/export", response_model=ExportBody)
def export_memories(request: Annotated[ExportRequest, Query()], knowledge: KnowledgeServiceDep,
                    scope: ScopeDep) -> ExportBody:
    page = knowledge.export(request, scope)
    return ExportBody(
        exported_at=format_timestamp(utc_now()), count=len(page.memories), offset=request.offset,
        limit=request.limit, has_more=page.has_more, data=[full_record(memory) for memory in page.memories],
    )


@router.post("/export/import", response_model=ImportBody, response_model_exclude_none=True, responses=FORBIDDEN)
def import_memories(
    body: ImportRequest,
    knowledge: KnowledgeServiceDep,
    scope: ScopeDep,
    operator_approved: Annotated[StrictQueryBool | None, Query()] = None,
) -> Any:
    if not (body.operator_approved or operator_approved):
        return error_response(403, "operator_approved: import replaces live memories; send operator_approved=true "
                                   "(in the body or as a query parameter) to confirm")
    valid: list[tuple[int, ImportRecord]] = []
    failed: list[ImportItem] = []
    for index, raw in enumerate(body.data):
        if not isinstance(raw, dict):
            failed.append(ImportItem(index, "failed", error="record: must be a JSON object"))
            continue
        try:
            valid.append((index, ImportRecord.model_validate(raw)))
        except ValidationError as error:
            raw_id = raw.get("id")
            failed.append(ImportItem(index, "failed", id=raw_id if isinstance(raw_id, str) else None,
                                     error=describe_validation_errors(error.errors())))
    report = knowledge.import_records(valid, scope)
    items = sorted([*report.items, *failed], key=lambda item: item.index)
    return ImportBody(
        imported=sum(item.status == "imported" for item in items),
        skipped=sum(item.status == "skipped" for item in items),
        failed=sum(item.status == "failed" for item in items),
        indexed=report.indexed,
        results=[ImportResultItem(index=item.index, status=item.status, id=item.id, reason=item.reason,
                                  error=item.error) for item in items],
    )
