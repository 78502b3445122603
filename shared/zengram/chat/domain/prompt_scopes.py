"""The scopes a system prompt or a memory policy applies at, project → subject → chat, and their order.

Shared by prompts (a chat turn's) and memory policies (a subject's data): neither function builds the other's
models at init (tests/functions/test_import_weight.py)."""

from __future__ import annotations

from enum import StrEnum

DEFAULT_PRIORITY = 100


class PromptScope(StrEnum):
    PROJECT = "project"  # every request of the project
    SUBJECT = "subject"  # requests for the subject named by `scope_id`
    CHAT = "chat"  # requests in the chat named by `scope_id`


SCOPE_ORDER = {PromptScope.PROJECT: 0, PromptScope.SUBJECT: 1, PromptScope.CHAT: 2}
