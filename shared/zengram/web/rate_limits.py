"""Per-API-key request limits (semantics.md): writes 60/min, reads 120/min, consolidation and research
together 1/hour, all settings. Runs as an app-wide dependency, after the API key middleware let the request in."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from zengram.kernel.errors import RateLimited
from zengram.web.access import principal_of

if TYPE_CHECKING:
    from zengram.kernel.lazy import Lazy
    from zengram.kernel.ports import RateLimiter
    from zengram.kernel.settings import HostSettings

UNLIMITED_PATHS = frozenset({"/health"})
HEAVY_PATHS = frozenset({"/consolidate", "/research"})  # POSTs that run several LLM calls
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
HEAVY_BUCKET = "heavy"
logger = logging.getLogger(__name__)


class LimitedHost(Protocol):
    """What the limits need of a host's container: its settings and its counter store."""

    @property
    def settings(self) -> HostSettings: ...

    @property
    def rate_limiter(self) -> RateLimiter: ...


def container_of(request: Request) -> LimitedHost:
    provider: Lazy[LimitedHost] = request.app.state.provider
    return provider.get()


@dataclass(frozen=True)
class Limit:
    bucket: str
    limit: int
    window_seconds: int
    description: str


def limit_for(method: str, path: str, settings: HostSettings) -> Limit | None:
    """Which budget a request draws from; None for the routes that are never limited."""
    path = path.rstrip("/") or "/"
    if path in UNLIMITED_PATHS:
        return None
    if method == "POST" and path in HEAVY_PATHS:
        per_hour = settings.rate_limit_heavy_per_hour
        return Limit(HEAVY_BUCKET, per_hour, 3600, f"at most {per_hour} consolidation or research runs per hour")
    if method in READ_METHODS:
        per_minute = settings.rate_limit_reads_per_minute
        return Limit("reads", per_minute, 60, f"at most {per_minute} reads per minute")
    per_minute = settings.rate_limit_writes_per_minute
    return Limit("writes", per_minute, 60, f"at most {per_minute} writes per minute")


async def enforce_rate_limit(request: Request) -> None:
    """Counts the request against its budget; raises RateLimited (429 + Retry-After) once it is spent. Async, so a
    request with limits off never leaves the event loop here; the counter's store is called on a worker thread.
    A plain function, not a generator (FastAPI enters those in an exit stack, ~30 µs a request, #18): the refund of a
    heavy request that fails is `refund_failed_heavy`, a dependency of the heavy routes alone."""
    if request.url.path.rstrip("/") in UNLIMITED_PATHS:
        return  # before touching the container: /health must answer without a record store
    container = container_of(request)
    settings = container.settings
    limit = limit_for(request.method, request.url.path, settings)
    if not settings.rate_limit_enabled or limit is None:
        return
    key = principal_of(request).budget_key  # each API key its own budgets, counted under its id, never the key
    try:
        retry_after = await run_in_threadpool(container.rate_limiter.hit, key, limit.bucket, limit.limit,
                                              limit.window_seconds)
    except Exception:  # fail open: a counter that cannot be reached (throttled, down) must not stop the service
        logger.warning("rate limiter unavailable; %s %s let through uncounted", request.method, request.url.path,
                       exc_info=True)
        return
    if retry_after is not None:
        raise RateLimited(f"rate limit: {limit.description} per API key; retry in {retry_after} s", retry_after,
                          limit=limit.limit, window_seconds=limit.window_seconds)
    if limit.bucket == HEAVY_BUCKET:
        request.state.counted_heavy = (key, limit)


async def refund_failed_heavy(request: Request) -> AsyncIterator[None]:
    """On the heavy routes (consolidation, research), after `enforce_rate_limit` counted the request: one that then
    fails (400, 503 without an LLM, 502...) is refunded. With one run an hour, a typo or a missing provider must
    not cost the hour."""
    counted: tuple[str, Limit] | None = getattr(request.state, "counted_heavy", None)
    if counted is None:
        yield
        return
    key, limit = counted
    try:
        yield
    except Exception:
        await run_in_threadpool(_refund, container_of(request).rate_limiter, key, limit)
        raise


def _refund(limiter: RateLimiter, key: str, limit: Limit) -> None:
    try:
        limiter.refund(key, limit.bucket, limit.window_seconds)
    except Exception:
        logger.warning("rate limiter unavailable; a failed %s request was not refunded", limit.bucket, exc_info=True)
