"""Profiles: `/profiles` as the Mnexium SDK calls it. A profile field is a claim slot of the subject (docs/chat.md,
"Profiles"), so the profile is the subject's truth and its history is the claims'."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from zengram.chat.api.deps import ChatDep, ProjectDep
from zengram.chat.api.schemas import CHAT_ERRORS
from zengram.chat.api.schemas.claims import FieldDeletedBody, ProfileOut, ProfileSchemaBody, SchemaFieldOut
from zengram.chat.domain.claims import SLOT_PATTERN, ProfileUpdate
from zengram.chat.domain.tenancy import SubjectId

router = APIRouter(prefix="/api/v1", tags=["chat: profiles"], responses=CHAT_ERRORS)
FieldKey = Annotated[str, Query(pattern=SLOT_PATTERN)]


@router.get("/profiles", response_model=ProfileOut)
def get_profile(subject_id: SubjectId, chat: ChatDep, project: ProjectDep) -> ProfileOut:
    return ProfileOut.of(project, subject_id, chat.claims.truth(project, subject_id))


@router.patch("/profiles", response_model=ProfileOut)
def update_profile(body: ProfileUpdate, chat: ChatDep, project: ProjectDep) -> ProfileOut:
    """Sets each field (a claim of its slot: the previous value is superseded and kept); answers the profile."""
    for claim in body.claims():
        chat.claims.create(project, claim)
    return ProfileOut.of(project, body.subject_id, chat.claims.truth(project, body.subject_id))


@router.delete("/profiles", response_model=FieldDeletedBody)
def delete_profile_field(subject_id: SubjectId, field_key: FieldKey, chat: ChatDep,
                         project: ProjectDep) -> FieldDeletedBody:
    """Removes a field: every claim of its slot is retracted (the records are kept)."""
    count = chat.claims.delete_slot(project, subject_id, field_key, "profile field deleted")
    return FieldDeletedBody(ok=True, deleted=True, field_key=field_key, retracted_claims=count)


@router.get("/profiles/schema", response_model=ProfileSchemaBody)
def profile_schema(chat: ChatDep, project: ProjectDep) -> ProfileSchemaBody:
    """The profile's fields: the system ones every project knows (learning names them when it extracts claims)
    and, since a field is a claim slot, any custom key the slot rule takes."""
    fields = [SchemaFieldOut(key=key, type=kind, description=text, is_system=True)
              for key, kind, text in chat.claims.profile_schema()]
    return ProfileSchemaBody(project_id=project, fields=fields, custom_fields=True, field_key_pattern=SLOT_PATTERN)
