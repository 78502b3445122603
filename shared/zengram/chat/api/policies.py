"""Memory policies: `/memory/policies` CRUD and `resolve`, scoped project → subject → chat (docs/chat.md,
"Memory policies")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from zengram.chat.api.deps import ChatDep, ProjectDep
from zengram.chat.api.schemas import CHAT_ERRORS, DeletedBody
from zengram.chat.api.schemas.policies import PoliciesBody, PolicyBody, PolicyOut, ResolvedPolicyBody
from zengram.chat.domain.policies import PolicyCreate, PolicyPatch, applied
from zengram.chat.domain.prompt_scopes import PromptScope
from zengram.chat.domain.tenancy import ChatId, SubjectId

router = APIRouter(prefix="/api/v1", tags=["chat: memory policies"], responses=CHAT_ERRORS)
PolicyIdPath = Annotated[str, Path(min_length=1, max_length=100)]


@router.get("/memory/policies", response_model=PoliciesBody)
def list_policies(chat: ChatDep, project: ProjectDep, scope: PromptScope | None = None,
                  include_inactive: bool = False) -> PoliciesBody:
    """The project's policies (active ones unless `include_inactive`), optionally of one scope."""
    policies = [p for p in chat.policies.of_project(project)
                if (include_inactive or p.is_active) and (scope is None or p.scope is scope)]
    return PoliciesBody(policies=[PolicyOut.of(p) for p in policies], count=len(policies))


@router.post("/memory/policies", status_code=201, response_model=PolicyBody)
def create_policy(body: PolicyCreate, chat: ChatDep, project: ProjectDep) -> PolicyBody:
    return PolicyBody(ok=True, policy=PolicyOut.of(chat.policies.create(project, body)))


@router.get("/memory/policies/resolve", response_model=ResolvedPolicyBody)
def resolve_policies(chat: ChatDep, project: ProjectDep, subject_id: SubjectId | None = None,
                     chat_id: ChatId | None = None) -> ResolvedPolicyBody:
    """What a request for this subject and chat applies when it does not choose: the active default policies of
    the project, the subject and the chat, their configs merged in that order, and what is in effect then."""
    policies = chat.policies.resolve(project, subject_id, chat_id)
    return ResolvedPolicyBody.of(subject_id, chat_id, policies, applied(policies), chat.policy_defaults)


@router.get("/memory/policies/{policy_id}", response_model=PolicyOut)
def get_policy(policy_id: PolicyIdPath, chat: ChatDep, project: ProjectDep) -> PolicyOut:
    return PolicyOut.of(chat.policies.get(project, policy_id))


@router.patch("/memory/policies/{policy_id}", response_model=PolicyBody)
def patch_policy(policy_id: PolicyIdPath, body: PolicyPatch, chat: ChatDep, project: ProjectDep) -> PolicyBody:
    return PolicyBody(ok=True, policy=PolicyOut.of(chat.policies.patch(project, policy_id, body)))


@router.delete("/memory/policies/{policy_id}", response_model=DeletedBody)
def delete_policy(policy_id: PolicyIdPath, chat: ChatDep, project: ProjectDep) -> DeletedBody:
    chat.policies.delete(project, policy_id)
    return DeletedBody(ok=True, deleted=True)
