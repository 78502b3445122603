"""System prompts, scoped project → subject → chat, and which of them a request gets."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, field_serializer

from zengram.chat.domain.prompt_scopes import DEFAULT_PRIORITY, PromptScope, applies, resolve_defaults
from zengram.kernel.errors import InvalidInput
from zengram.kernel.timestamps import format_timestamp


class SystemPrompt(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    project_id: str
    name: str
    prompt_text: str
    scope: PromptScope = PromptScope.PROJECT
    scope_id: str | None = None
    is_default: bool = False  # injected automatically (system_prompt: true) where its scope applies
    is_active: bool = True
    priority: int = DEFAULT_PRIORITY  # lower first within a scope
    created_at: datetime
    updated_at: datetime

    @field_serializer("created_at", "updated_at", when_used="json")
    def _timestamp_text(self, moment: datetime) -> str:
        return format_timestamp(moment)

    def applies_to(self, subject_id: str | None, chat_id: str | None) -> bool:
        return applies(self, subject_id, chat_id)

    def changed(self, changes: dict[str, Any], at: datetime) -> SystemPrompt:
        """Name, text, default flag, activity and priority may change; scope and scope_id stay."""
        return self.model_copy(update={**changes, "updated_at": at})


def check_scope(scope: PromptScope, scope_id: str | None) -> None:
    if scope is PromptScope.PROJECT and scope_id is not None:
        raise InvalidInput("scope_id", "a project prompt applies to the whole project and takes no scope_id")
    if scope is not PromptScope.PROJECT and scope_id is None:
        raise InvalidInput("scope_id", f"required for a {scope.value} prompt (the {scope.value} id it applies to)")


def resolve(prompts: Iterable[SystemPrompt], subject_id: str | None, chat_id: str | None) -> list[SystemPrompt]:
    """The prompts `system_prompt: true` injects, in order: the active defaults of the project, then of the subject,
    then of the chat; within a scope by priority (lower first), then age."""
    return resolve_defaults(prompts, subject_id, chat_id)


def combined_text(prompts: Iterable[SystemPrompt]) -> str:
    return "\n\n".join(prompt.prompt_text for prompt in prompts)
