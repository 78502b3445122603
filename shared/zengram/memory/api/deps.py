"""FastAPI dependencies, as `Annotated` aliases.

They are `async def` because they only look things up: FastAPI runs a plain `def` dependency on a worker
thread, and the hops cost more CPU per request than the lookups (measured: ~0.1 ms each, 8 per POST /memory).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Request

if TYPE_CHECKING:  # only named here: a function imports the services its router needs, not every group's
    from zengram.kernel.lazy import Lazy
    from zengram.memory.services.clients import ClientService
    from zengram.memory.services.collections import CollectionService
    from zengram.memory.services.consolidation import ConsolidationService
    from zengram.memory.services.entities import EntityService
    from zengram.memory.services.health import HealthService
    from zengram.memory.services.keys import KeyService
    from zengram.memory.services.knowledge import KnowledgeService
    from zengram.memory.services.memory import MemoryService
    from zengram.memory.services.reflect import ReflectService
    from zengram.memory.services.research import ResearchService
    from zengram.memory.services.stats import StatsService
    from zengram.memory.wiring import MemoryContainer


def container_of(request: Request) -> MemoryContainer:
    provider: Lazy[MemoryContainer] = request.app.state.provider
    return provider.get()


async def get_container(request: Request) -> MemoryContainer:
    return container_of(request)


async def get_memory_service(container: ContainerDep) -> MemoryService:
    return container.memory


async def get_knowledge_service(container: ContainerDep) -> KnowledgeService:
    return container.knowledge


async def get_research_service(container: ContainerDep) -> ResearchService:
    research = container.research
    research.ensure_enabled()  # before the body is read: a disabled feature answers 503 whatever was sent
    return research


async def get_reflect_service(container: ContainerDep) -> ReflectService:
    return container.reflect


async def get_client_service(container: ContainerDep) -> ClientService:
    return container.clients


async def get_stats_service(container: ContainerDep) -> StatsService:
    return container.stats


async def get_consolidation_service(container: ContainerDep) -> ConsolidationService:
    return container.consolidation


async def get_entity_service(container: ContainerDep) -> EntityService:
    return container.entities


async def get_key_service(container: ContainerDep) -> KeyService:
    return container.keys


def get_health_service(container: ContainerDep) -> HealthService:
    return container.health


def get_collection_service(container: ContainerDep) -> CollectionService:
    return container.collections


# FastAPI needs only each alias's dependency, mypy its type. At run time the aliases name no type: resolving them
# would import the container's wiring (settings, ports, every service) when a Lambda function starts.
if TYPE_CHECKING:
    ContainerDep = Annotated[MemoryContainer, Depends(get_container)]
    MemoryServiceDep = Annotated[MemoryService, Depends(get_memory_service)]
    KnowledgeServiceDep = Annotated[KnowledgeService, Depends(get_knowledge_service)]
    ResearchServiceDep = Annotated[ResearchService, Depends(get_research_service)]
    ReflectServiceDep = Annotated[ReflectService, Depends(get_reflect_service)]
    ClientServiceDep = Annotated[ClientService, Depends(get_client_service)]
    StatsServiceDep = Annotated[StatsService, Depends(get_stats_service)]
    ConsolidationServiceDep = Annotated[ConsolidationService, Depends(get_consolidation_service)]
    EntityServiceDep = Annotated[EntityService, Depends(get_entity_service)]
    KeyServiceDep = Annotated[KeyService, Depends(get_key_service)]
    HealthServiceDep = Annotated[HealthService, Depends(get_health_service)]
    CollectionServiceDep = Annotated[CollectionService, Depends(get_collection_service)]
else:
    ContainerDep = Annotated[object, Depends(get_container)]
    MemoryServiceDep = Annotated[object, Depends(get_memory_service)]
    KnowledgeServiceDep = Annotated[object, Depends(get_knowledge_service)]
    ResearchServiceDep = Annotated[object, Depends(get_research_service)]
    ReflectServiceDep = Annotated[object, Depends(get_reflect_service)]
    ClientServiceDep = Annotated[object, Depends(get_client_service)]
    StatsServiceDep = Annotated[object, Depends(get_stats_service)]
    ConsolidationServiceDep = Annotated[object, Depends(get_consolidation_service)]
    EntityServiceDep = Annotated[object, Depends(get_entity_service)]
    KeyServiceDep = Annotated[object, Depends(get_key_service)]
    HealthServiceDep = Annotated[object, Depends(get_health_service)]
    CollectionServiceDep = Annotated[object, Depends(get_collection_service)]
