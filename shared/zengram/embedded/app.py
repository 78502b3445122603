"""The embedded app: all routers, one container over the data folder."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

from fastapi import FastAPI

from zengram.assembly.containers import Container, build_container, build_documents_container
from zengram.assembly.keys import resolve_api_key
from zengram.assembly.provider import ContainerProvider
from zengram.assembly.roles import HOST_ROUTE_ROLES
from zengram.chat.api.audit import audited
from zengram.chat.api.routers import CHAT_ROUTERS
from zengram.documents.api import app as kb
from zengram.documents.wiring import DocumentsContainer
from zengram.embedded.dashboard import DASHBOARD_PREFIX, mount_dashboard
from zengram.embedded.scheduler import PeriodicTask
from zengram.kernel.errors import IndexUnavailable
from zengram.memory.api import (
    admin,
    briefing,
    clients,
    collections,
    consolidate,
    export,
    health,
    memory,
    reflect,
    research,
    stats,
)
from zengram.memory.api import entities as entity_routes
from zengram.memory.domain.consolidation import schedule_interval
from zengram.settings import Settings
from zengram.web.app import create_app
from zengram.web.middleware import OPEN_PATHS

logger = logging.getLogger(__name__)
ROUTERS = [health.router, memory.router, briefing.router, export.router, research.router, reflect.router,
           clients.router, stats.router, collections.router, consolidate.router,
           entity_routes.router, admin.router, *CHAT_ROUTERS]


def build_embedded_app(settings: Settings, container: Container | None = None,
                       documents_container: DocumentsContainer | None = None) -> FastAPI:
    """`container` and `documents_container` let tests and benchmarks pass ones wired with their own embedder or
    clock. The document knowledge base is mounted at /kb and shares the memories' embedder."""
    key, _ = resolve_api_key(settings)
    provider = ContainerProvider(lambda: container or build_container(settings))
    documents = kb.Lazy(lambda: documents_container or build_documents_container(
        settings, embedder=provider.get().embedder, recover=True), close=DocumentsContainer.close)

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
        documents.get()  # restarts indexing jobs a previous process left queued
        schedules = [repair_schedule(settings, provider), consolidation_schedule(settings, provider)]
        for schedule in schedules:
            if schedule is not None:
                schedule.start()
        yield
        for schedule in schedules:
            if schedule is not None:
                schedule.stop()
        documents.close()
        provider.close()

    app = create_app(ROUTERS, provider, expected_key=lambda: key, open_paths=OPEN_PATHS | kb.open_paths(),
                     route_roles=HOST_ROUTE_ROLES,
                     open_prefixes=(DASHBOARD_PREFIX,), lifespan=lifespan)
    audited(app)  # the chat layer's request audit (docs/chat.md, "Audit")
    mount_dashboard(app)
    app.mount(kb.BASE_PATH, kb.create_kb_app(documents))
    return app


def repair_schedule(settings: Settings, provider: ContainerProvider) -> PeriodicTask:
    """The in-process repair sweep: writes an index outage left pending (memories and the chat layer's) are
    indexed once the index answers again, without waiting for another write (the AWS host: EventBridge)."""
    def sweep() -> None:
        container = provider.get()
        container.memory.index_sync.repair_until_clean(keep_going=lambda: True, batch=settings.index_repair_batch)
        container.chat.repair_index(settings.index_repair_batch)

    return PeriodicTask(timedelta(seconds=settings.index_repair_interval_seconds), sweep, name="zengram-repair")


def consolidation_schedule(settings: Settings, provider: ContainerProvider) -> PeriodicTask | None:
    """The in-process consolidation timer, when `consolidation_enabled` (the AWS host uses EventBridge)."""
    if not settings.consolidation_enabled:
        return None
    return PeriodicTask(schedule_interval(settings.consolidation_interval),
                        lambda: provider.get().consolidation.run_scheduled(), name="zengram-consolidation")
