"""FastAPI dependencies, as `Annotated` aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from zengram.bootstrap import Container, ContainerProvider
from zengram.services.knowledge import KnowledgeService
from zengram.services.memory import MemoryService


def get_container(request: Request) -> Container:
    provider: ContainerProvider = request.app.state.provider
    return provider.get()


def get_memory_service(container: Annotated[Container, Depends(get_container)]) -> MemoryService:
    return container.memory


MemoryServiceDep = Annotated[MemoryService, Depends(get_memory_service)]


def get_knowledge_service(container: Annotated[Container, Depends(get_container)]) -> KnowledgeService:
    return container.knowledge


KnowledgeServiceDep = Annotated[KnowledgeService, Depends(get_knowledge_service)]
