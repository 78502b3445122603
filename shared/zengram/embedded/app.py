"""The embedded app: all routers, one container over the data folder."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from zengram.api.app import create_app
from zengram.api.chat.routers import CHAT_ROUTERS
from zengram.api.routers import (
    admin,
    briefing,
    clients,
    consolidate,
    export,
    health,
    memory,
    reflect,
    research,
    stats,
)
from zengram.api.routers import entities as entity_routes
from zengram.bootstrap import Container, ContainerProvider, build_container
from zengram.domain.consolidation import schedule_interval
from zengram.domain.errors import IndexUnavailable
from zengram.embedded.keys import resolve_api_key
from zengram.embedded.scheduler import PeriodicTask
from zengram.settings import Settings

logger = logging.getLogger(__name__)
ROUTERS = [health.router, memory.router, briefing.router, export.router, research.router, reflect.router,
           clients.router, stats.router, consolidate.router,
           entity_routes.router, admin.router, *CHAT_ROUTERS]


def build_embedded_app(settings: Settings, container: Container | None = None) -> FastAPI:
    """`container` lets tests and benchmarks pass one wired with their own embedder or clock."""
    key, _ = resolve_api_key(settings)
    provider = ContainerProvider(lambda: container or build_container(settings))

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # Fail at startup on an index built with another model, not on the first search (an index that is merely
        # unavailable is no reason not to serve: writes are stored and wait). Since no scheduler runs here,
        # finish any index writes a crash left pending before serving.
        index_sync = provider.get().memory.index_sync
        try:
            index_sync.ensure_compatible()
        except IndexUnavailable as error:
            logger.warning("starting without the search index (writes wait for it): %s", error)
        index_sync.repair_until_clean(keep_going=lambda: True, batch=settings.index_repair_batch)
        chat = provider.get().chat  # the chat layer: its index writes left pending, and its stored learning jobs
        chat.repair_index(settings.index_repair_batch)
        chat.start_learning()
        schedule = consolidation_schedule(settings, provider)
        if schedule is not None:
            schedule.start()
        yield
        if schedule is not None:
            schedule.stop()
        provider.close()

    return create_app(ROUTERS, provider, expected_key=lambda: key, lifespan=lifespan)


def consolidation_schedule(settings: Settings, provider: ContainerProvider) -> PeriodicTask | None:
    """The in-process consolidation timer, when `consolidation_enabled` (the AWS host uses EventBridge)."""
    if not settings.consolidation_enabled:
        return None
    return PeriodicTask(schedule_interval(settings.consolidation_interval),
                        lambda: provider.get().consolidation.run_scheduled(), name="zengram-consolidation")
