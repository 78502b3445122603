"""Agent state: `GET/PUT/DELETE /state/{key}`, scoped by the `x-subject-id` header."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from zengram.chat.api import PREFIX
from zengram.chat.api.deps import ChatDep, ProjectDep, SubjectHeader
from zengram.chat.api.schemas import CHAT_ERRORS, DeletedBody
from zengram.chat.api.schemas.state import StateOut
from zengram.chat.domain.requests import StatePut
from zengram.chat.domain.state import STATE_KEY_PATTERN

router = APIRouter(prefix=PREFIX, tags=["chat: state"], responses=CHAT_ERRORS)
Key = Annotated[str, Path(pattern=STATE_KEY_PATTERN)]


@router.get("/state/{key}", response_model=StateOut)
def get_state(key: Key, subject_id: SubjectHeader, chat: ChatDep, project: ProjectDep) -> StateOut:
    return StateOut.of(chat.state.get(project, subject_id, key))


@router.put("/state/{key}", response_model=StateOut)
def put_state(key: Key, body: StatePut, subject_id: SubjectHeader, chat: ChatDep, project: ProjectDep) -> StateOut:
    return StateOut.of(chat.state.put(project, subject_id, key, body.value, body.ttl_seconds))


@router.delete("/state/{key}", response_model=DeletedBody)
def delete_state(key: Key, subject_id: SubjectHeader, chat: ChatDep, project: ProjectDep) -> DeletedBody:
    chat.state.delete(project, subject_id, key)
    return DeletedBody(ok=True, deleted=True)
