"""Dependencies of the chat routes: the layer, the project a request is about, the subject header."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Header, Request

from zengram.chat.domain.tenancy import PROJECT_HEADER, ProjectId, SubjectId, resolve_project
from zengram.web.access import ScopeDep

if TYPE_CHECKING:  # a forward reference for FastAPI: the chat layer's wiring is imported when it is built
    from zengram.chat.wiring import ChatLayer


async def get_chat(request: Request) -> ChatLayer:
    """The host's chat layer: its container builds it on first use (`zengram.assembly.containers`)."""
    layer: ChatLayer = request.app.state.provider.get().chat
    return layer


if TYPE_CHECKING:
    ChatDep = Annotated[ChatLayer, Depends(get_chat)]
else:  # the type stays a name for mypy only (zengram.memory.api.deps says why)
    ChatDep = Annotated[object, Depends(get_chat)]


def get_project(scope: ScopeDep, project: Annotated[ProjectId | None, Header(
        alias=PROJECT_HEADER, description="The project (one of the API key's clients); default: the key's only "
                                          "client, else `global` when the key may use it")] = None) -> str:
    return resolve_project(scope, project)


ProjectDep = Annotated[str, Depends(get_project)]
SubjectHeader = Annotated[SubjectId, Header(alias="x-subject-id", description="The subject the state belongs to")]
