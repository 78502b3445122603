"""System prompts: `/prompts` CRUD and `resolve`, scoped project → subject → chat."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from zengram.chat.api import PREFIX
from zengram.chat.api.deps import ChatDep, ProjectDep
from zengram.chat.api.schemas import CHAT_ERRORS, DeletedBody
from zengram.chat.api.schemas.prompts import PromptBody, PromptOut, PromptsBody, ResolvedBody
from zengram.chat.domain.prompts import combined_text
from zengram.chat.domain.requests import PromptCreate, PromptPatch
from zengram.chat.domain.tenancy import ChatId, SubjectId

router = APIRouter(prefix=PREFIX, tags=["chat: prompts"], responses=CHAT_ERRORS)
PromptIdPath = Annotated[str, Path(min_length=1, max_length=100)]


@router.get("/prompts", response_model=PromptsBody)
def list_prompts(chat: ChatDep, project: ProjectDep) -> PromptsBody:
    return PromptsBody(prompts=[PromptOut.of(prompt) for prompt in chat.prompts.of_project(project)])


@router.post("/prompts", status_code=201, response_model=PromptBody)
def create_prompt(body: PromptCreate, chat: ChatDep, project: ProjectDep) -> PromptBody:
    return PromptBody(ok=True, prompt=PromptOut.of(chat.prompts.create(project, body)))


@router.get("/prompts/resolve", response_model=ResolvedBody)
def resolve_prompts(chat: ChatDep, project: ProjectDep, subject_id: SubjectId | None = None,
                    chat_id: ChatId | None = None, combined: bool = True) -> ResolvedBody:
    """What `system_prompt: true` injects for this subject and chat: the active defaults of the project, the
    subject and the chat, in that order (`combined` is accepted; the combined text is always included)."""
    prompts = chat.prompts.resolve(project, subject_id, chat_id)
    return ResolvedBody(subject_id=subject_id, chat_id=chat_id, prompts=[PromptOut.of(p) for p in prompts],
                        prompt_text=combined_text(prompts), count=len(prompts))


@router.get("/prompts/{prompt_id}", response_model=PromptOut)
def get_prompt(prompt_id: PromptIdPath, chat: ChatDep, project: ProjectDep) -> PromptOut:
    return PromptOut.of(chat.prompts.get(project, prompt_id))


@router.patch("/prompts/{prompt_id}", response_model=PromptBody)
def patch_prompt(prompt_id: PromptIdPath, body: PromptPatch, chat: ChatDep, project: ProjectDep) -> PromptBody:
    return PromptBody(ok=True, prompt=PromptOut.of(chat.prompts.patch(project, prompt_id, body)))


@router.delete("/prompts/{prompt_id}", response_model=DeletedBody)
def delete_prompt(prompt_id: PromptIdPath, chat: ChatDep, project: ProjectDep) -> DeletedBody:
    chat.prompts.delete(project, prompt_id)
    return DeletedBody(ok=True, deleted=True)
