"""Response bodies of the prompt routes."""

from __future__ import annotations

from pydantic import BaseModel

from zengram.chat.domain.prompts import SystemPrompt


class PromptOut(BaseModel):
    id: str
    project_id: str
    name: str
    prompt_text: str
    scope: str
    scope_id: str | None
    is_default: bool
    is_active: bool
    priority: int
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, prompt: SystemPrompt) -> PromptOut:
        return cls(**prompt.model_dump(mode="json"))


class PromptBody(BaseModel):
    ok: bool
    prompt: PromptOut


class PromptsBody(BaseModel):
    prompts: list[PromptOut]


class ResolvedBody(BaseModel):
    subject_id: str | None
    chat_id: str | None
    prompts: list[PromptOut]
    prompt_text: str  # the prompts combined, as a completion receives them
    count: int

