"""FastAPI dependencies, as `Annotated` aliases.

They are `async def` because they only look things up: FastAPI runs a plain `def` dependency on a worker
thread, and the hops cost more CPU per request than the lookups (measured: ~0.1 ms each, 8 per POST /memory).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from zengram.bootstrap import Container, ContainerProvider
from zengram.services.clients import ClientService
from zengram.services.collections import CollectionService
from zengram.services.consolidation import ConsolidationService
from zengram.services.entities import EntityService
from zengram.services.health import HealthService
from zengram.services.keys import KeyService
from zengram.services.knowledge import KnowledgeService
from zengram.services.memory import MemoryService
from zengram.services.reflect import ReflectService
from zengram.services.research import ResearchService
from zengram.services.stats import StatsService


def container_of(request: Request) -> Container:
    provider: ContainerProvider = request.app.state.provider
    return provider.get()


async def get_container(request: Request) -> Container:
    return container_of(request)


async def get_memory_service(container: Annotated[Container, Depends(get_container)]) -> MemoryService:
    return container.memory


MemoryServiceDep = Annotated[MemoryService, Depends(get_memory_service)]


async def get_knowledge_service(container: Annotated[Container, Depends(get_container)]) -> KnowledgeService:
    return container.knowledge


KnowledgeServiceDep = Annotated[KnowledgeService, Depends(get_knowledge_service)]


async def get_research_service(container: Annotated[Container, Depends(get_container)]) -> ResearchService:
    research = container.research
    research.ensure_enabled()  # before the body is read: a disabled feature answers 503 whatever was sent
    return research


ResearchServiceDep = Annotated[ResearchService, Depends(get_research_service)]


async def get_reflect_service(container: Annotated[Container, Depends(get_container)]) -> ReflectService:
    return container.reflect


ReflectServiceDep = Annotated[ReflectService, Depends(get_reflect_service)]


async def get_client_service(container: Annotated[Container, Depends(get_container)]) -> ClientService:
    return container.clients


ClientServiceDep = Annotated[ClientService, Depends(get_client_service)]


async def get_stats_service(container: Annotated[Container, Depends(get_container)]) -> StatsService:
    return container.stats


StatsServiceDep = Annotated[StatsService, Depends(get_stats_service)]


async def get_consolidation_service(container: Annotated[Container, Depends(get_container)]) -> ConsolidationService:
    return container.consolidation


ConsolidationServiceDep = Annotated[ConsolidationService, Depends(get_consolidation_service)]


async def get_entity_service(container: Annotated[Container, Depends(get_container)]) -> EntityService:
    return container.entities


EntityServiceDep = Annotated[EntityService, Depends(get_entity_service)]


async def get_key_service(container: Annotated[Container, Depends(get_container)]) -> KeyService:
    return container.keys


KeyServiceDep = Annotated[KeyService, Depends(get_key_service)]


def get_health_service(container: Annotated[Container, Depends(get_container)]) -> HealthService:
    return container.health


HealthServiceDep = Annotated[HealthService, Depends(get_health_service)]


def get_collection_service(container: Annotated[Container, Depends(get_container)]) -> CollectionService:
    return container.collections


CollectionServiceDep = Annotated[CollectionService, Depends(get_collection_service)]
