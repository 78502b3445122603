"""System prompts: managed per project, scoped project → subject → chat, resolved for each request."""

from __future__ import annotations

from zengram.chat.domain.prompts import SystemPrompt, check_scope, resolve
from zengram.chat.domain.requests import PromptCreate, PromptPatch
from zengram.chat.domain.tenancy import new_id
from zengram.chat.ports import PromptStore
from zengram.kernel.content import Scrubber
from zengram.kernel.errors import NotFound
from zengram.kernel.ports import Clock


class PromptService:
    def __init__(self, store: PromptStore, clock: Clock, scrubber: Scrubber) -> None:
        self._store = store
        self._clock = clock
        self._scrubber = scrubber

    def create(self, project_id: str, body: PromptCreate) -> SystemPrompt:
        check_scope(body.scope, body.scope_id)
        now = self._clock.now()
        return self._store.put(SystemPrompt(
            id=new_id("sp"), project_id=project_id, name=body.name, prompt_text=self._scrubber.scrub(body.prompt_text),
            scope=body.scope, scope_id=body.scope_id, is_default=body.is_default, priority=body.priority,
            created_at=now, updated_at=now))

    def get(self, project_id: str, prompt_id: str) -> SystemPrompt:
        prompt = self._store.get(project_id, prompt_id)
        if prompt is None:
            raise NotFound(f"prompt {prompt_id} not found")
        return prompt

    def of_project(self, project_id: str) -> list[SystemPrompt]:
        return self._store.of_project(project_id)

    def patch(self, project_id: str, prompt_id: str, patch: PromptPatch) -> SystemPrompt:
        changes = patch.model_dump(exclude_none=True)
        if "prompt_text" in changes:
            changes["prompt_text"] = self._scrubber.scrub(changes["prompt_text"])
        return self._store.put(self.get(project_id, prompt_id).changed(changes, self._clock.now()))

    def delete(self, project_id: str, prompt_id: str) -> None:
        if not self._store.delete(project_id, prompt_id):
            raise NotFound(f"prompt {prompt_id} not found")

    def resolve(self, project_id: str, subject_id: str | None, chat_id: str | None) -> list[SystemPrompt]:
        """The prompts `system_prompt: true` injects for this subject and chat, in order."""
        return resolve(self._store.of_project(project_id), subject_id, chat_id)
