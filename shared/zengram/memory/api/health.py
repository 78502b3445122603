from __future__ import annotations

from fastapi import APIRouter, Response

from zengram.kernel.timestamps import format_timestamp, utc_now
from zengram.memory.api.deps import HealthServiceDep
from zengram.memory.api.schemas.health import HealthBody

router = APIRouter(tags=["health"])


@router.get("/health", response_model=HealthBody,
            responses={503: {"model": HealthBody, "description": "`degraded`: some dependency is down (`checks`)"}})
def health(checks: HealthServiceDep, response: Response) -> HealthBody:
    """Whether the record store, the search index and the embedder answer; the only route without the API key."""
    report = checks.check()
    if not report.healthy:
        response.status_code = 503
    return HealthBody(status="ok" if report.healthy else "degraded", service="zengram", checks=report.checks,
                      timestamp=format_timestamp(utc_now()))
