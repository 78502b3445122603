"""Memory policies: managed per project, scoped project → subject → chat, chosen for each request (docs/chat.md,
"Memory policies")."""

from __future__ import annotations

from zengram.chat.domain.policies import (
    AppliedPolicy,
    MemoryPolicy,
    PolicyChoice,
    PolicyCreate,
    PolicyPatch,
    applied,
    resolve,
)
from zengram.chat.domain.prompts import check_scope
from zengram.chat.domain.tenancy import new_id
from zengram.chat.ports import MemoryPolicyStore
from zengram.kernel.content import Scrubber
from zengram.kernel.errors import Conflict, NotFound
from zengram.kernel.ports import Clock


class MemoryPolicyService:
    def __init__(self, store: MemoryPolicyStore, clock: Clock, scrubber: Scrubber) -> None:
        self._store = store
        self._clock = clock
        self._scrubber = scrubber

    def create(self, project_id: str, body: PolicyCreate) -> MemoryPolicy:
        scope_id = body.scope_id or None
        check_scope(body.scope, scope_id)
        if body.id is not None and self._store.get(project_id, body.id) is not None:
            raise Conflict(f"memory policy {body.id} already exists")
        now = self._clock.now()
        return self._store.put(MemoryPolicy(
            id=body.id or new_id("mp"), project_id=project_id, name=self._scrubber.scrub(body.name),
            policy_text=self._scrubber.scrub(body.policy_text), scope=body.scope, scope_id=scope_id,
            is_default=body.is_default, is_active=body.is_active, priority=body.priority, config=body.config,
            metadata=self._scrubber.scrub_value(body.metadata) if body.metadata is not None else None,
            created_at=now, updated_at=now))

    def get(self, project_id: str, policy_id: str) -> MemoryPolicy:
        policy = self._store.get(project_id, policy_id)
        if policy is None:
            raise NotFound(f"memory policy {policy_id} not found")
        return policy

    def of_project(self, project_id: str) -> list[MemoryPolicy]:
        return self._store.of_project(project_id)

    def patch(self, project_id: str, policy_id: str, patch: PolicyPatch) -> MemoryPolicy:
        changes = {name: getattr(patch, name) for name in patch.model_fields_set if getattr(patch, name) is not None}
        for field in ("name", "policy_text"):
            if field in changes:
                changes[field] = self._scrubber.scrub(changes[field])
        if "metadata" in changes:
            changes["metadata"] = self._scrubber.scrub_value(changes["metadata"])
        return self._store.put(self.get(project_id, policy_id).changed(changes, self._clock.now()))

    def delete(self, project_id: str, policy_id: str) -> None:
        if not self._store.delete(project_id, policy_id):
            raise NotFound(f"memory policy {policy_id} not found")

    def resolve(self, project_id: str, subject_id: str | None, chat_id: str | None) -> list[MemoryPolicy]:
        """The active default policies that apply to this subject and chat, in order."""
        return resolve(self._store.of_project(project_id), subject_id, chat_id)

    def for_request(self, project_id: str, subject_id: str, chat_id: str, choice: PolicyChoice) -> AppliedPolicy:
        """The policy a request applies: none when it turned policies off, the one it named (NotFound when that
        is unknown; an inactive one still applies, as named), else the scoped defaults."""
        if choice.off:
            return AppliedPolicy()
        if choice.policy_id is not None:
            return applied([self.get(project_id, choice.policy_id)])
        return applied(self.resolve(project_id, subject_id, chat_id))
