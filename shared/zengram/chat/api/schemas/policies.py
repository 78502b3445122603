"""Response bodies of the memory policy routes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from zengram.chat.domain.policies import AppliedPolicy, MemoryPolicy, PolicyConfig


class PolicyOut(BaseModel):
    id: str
    project_id: str
    name: str
    policy_text: str
    scope: str
    scope_id: str | None
    is_default: bool
    is_active: bool
    priority: int
    config: dict[str, Any]  # the keys the policy sets
    metadata: dict[str, Any] | None
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, policy: MemoryPolicy) -> PolicyOut:
        body = policy.model_dump(mode="json")
        return cls(**{**body, "config": policy.config.model_dump(exclude_none=True)})


class PolicyBody(BaseModel):
    ok: bool
    policy: PolicyOut


class PoliciesBody(BaseModel):
    policies: list[PolicyOut]
    count: int


class ResolvedPolicyBody(BaseModel):
    subject_id: str | None
    chat_id: str | None
    policies: list[PolicyOut]  # the active defaults that apply, project → subject → chat
    policy_ids: list[str]
    policy_text: str  # their texts joined, as learning receives them
    config: dict[str, Any]  # their configs merged (a later scope's key wins)
    effective: dict[str, Any]  # every key, with the server's default where no policy sets it

    @classmethod
    def of(cls, subject_id: str | None, chat_id: str | None, policies: list[MemoryPolicy], merged: AppliedPolicy,
           defaults: PolicyConfig) -> ResolvedPolicyBody:
        return cls(subject_id=subject_id, chat_id=chat_id, policies=[PolicyOut.of(p) for p in policies],
                   policy_ids=merged.policy_ids, policy_text=merged.policy_text,
                   config=merged.config.model_dump(exclude_none=True),
                   effective=defaults.merged(merged.config).model_dump())
