from __future__ import annotations

from fastapi import APIRouter

from zengram.api.schemas import HealthBody
from zengram.domain.models import format_timestamp, utc_now

router = APIRouter(tags=["health"])


@router.get("/health", response_model=HealthBody)
def health() -> HealthBody:
    """Liveness; the only route without the API key."""
    return HealthBody(status="ok", service="zengram", timestamp=format_timestamp(utc_now()))
